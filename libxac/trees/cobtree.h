/* cobtree.h: a cache-oblivious B-tree in a memory-mapped file: a packed
 * memory array (PMA) indexed by a static binary tree in van Emde Boas
 * layout (thesis section 5.1; Bender, Demaine, Farach-Colton).
 *
 * Layout (offsets in struct tf_header):
 *
 *   recs   M segment records      record s: uint32_t cnt (elements in
 *                                 the segment, kept sorted and packed at
 *                                 its start; the rest is a gap), 4 bytes
 *                                 pad, uint64_t keys[S], uint32_t vix[S]
 *                                 (vix[i]: the heap entry holding the value
 *                                 of keys[i]).  One record per segment, so
 *                                 an insert into a segment writes one place
 *                                 (C = M segments * S slots)
 *   index  struct co_node[2M-1]   complete binary tree over the M segments
 *                                 (leaf s is segment s), vEB order (veb.h);
 *                                 a node holds the smallest key under it
 *                                 and whether anything is under it
 *   heap   TF_HEAP_LANES lanes    each lane a heap of its own, its record
 *                                 (struct tf_heap_lane) on a page of its
 *                                 own from h_co_lanes: chunk k holds
 *                                 CO_HEAP_BASE << k entries, each the
 *                                 uint64_t key that owns it, then its value
 *                                 padded to 8 bytes.  A process appends to
 *                                 lane pid % TF_HEAP_LANES (64), so
 *                                 processes that insert at once write
 *                                 different pages, records and tails alike.
 *                                 vix = lane << 26 | entry.  A lane's
 *                                 entries [0, n) are live.  Which ones is
 *                                 not stored: entry e is live iff the key
 *                                 written in it owns it (its vix names e),
 *                                 so the end n is found by a binary search
 *                                 in [hint, hint + 64] (l_hint, rewritten
 *                                 once every 64 inserts into the lane).  A
 *                                 delete reads every lane's record (the
 *                                 element count decides halving).
 *                                 A value stays in its entry while its key
 *                                 is in the tree, so rebalances and
 *                                 resizes move only keys and indexes; a
 *                                 delete moves the lane's last entry into
 *                                 the freed one.
 *
 * S = max(8, next power of two >= lg C), M a power of two, C >= 64.
 *
 * Search descends the index: at each node it goes right iff the right
 * subtree is non-empty and its smallest key is <= the key, so it ends in
 * the last segment whose first key is <= the key (or the leftmost
 * candidate), then binary-searches that segment.
 *
 * Insert puts the element into its segment if the segment has a gap.  If
 * the segment is full it looks at the enclosing aligned windows of 2, 4,
 * ... segments and rebalances the smallest one whose density after the
 * insert is at most tau(h) = 1 - h/(4H) (h the window's height, H = lg M:
 * 1 for one segment, 3/4 for the whole array), spreading its elements
 * evenly over its segments; if even the whole array is too dense, the
 * array doubles (new extents, everything redistributed, old extents
 * freed).  The index nodes above every changed segment are recomputed.
 *
 * Delete removes the element from its segment (closing the gap); if the
 * whole array then holds fewer than C/8 elements and C > 64 it halves.
 *
 * Invariants (co_check): cnt[s] <= S; keys strictly ascending across the
 * whole array (segment by segment); every index leaf equals its segment's
 * (non-empty, first key) and every internal node the combination of its
 * children; n <= C, and n >= C/8 unless C = 64; every vix[i] is a live
 * entry of its lane (below that lane's n), used once, whose key is
 * keys[i]; and every lane's hint <= n <= hint + CO_HEAP_WINDOW.
 *
 * Like btree.h these are serial functions run inside the caller's
 * transaction.  A rebalance gathers the window into a malloc()ed buffer,
 * which is process memory and freed before the function returns.
 */
#ifndef CO_COBTREE_H
#define CO_COBTREE_H

#include <stddef.h>
#include <stdint.h>

#include "tfile.h"
#include "tstore.h"
#include "veb.h"

#define CO_MIN_CAPACITY 64u
/* A segment record of S slots (recs, above): byte offsets of its keys and
 * heap indexes, and its size.  The count is at offset 0. */
#define CO_REC_KEYS 8u
#define CO_REC_VIX(S) (CO_REC_KEYS + 8u * (uint64_t)(S))
#define CO_REC_BYTES(S) (CO_REC_VIX(S) + 4u * (uint64_t)(S))
#define CO_HEAP_BASE 64u /* entries in heap chunk 0 */
#define CO_HEAP_WINDOW 64u /* a lane's end lies within this of its hint */
#define CO_LANE_SHIFT 26      /* vix: lane in the top 6 bits, then entry */
#define CO_VIX(lane, e) ((uint32_t)(lane) << CO_LANE_SHIFT | (uint32_t)(e))
#define CO_VIX_LANE(v) ((uint32_t)(v) >> CO_LANE_SHIFT)
#define CO_VIX_ENTRY(v) ((uint32_t)(v) & ((1u << CO_LANE_SHIFT) - 1))

struct co_node {
    uint64_t cn_min;
    uint64_t cn_nonempty;
};

struct co_tree {
    struct ts_store *co_s;
    uint32_t co_vbytes;
    struct veb co_veb; /* tables for the current index height */
    uint32_t co_lane;  /* the heap lane this process appends to */
    uint64_t co_end[TF_HEAP_LANES]; /* each lane's end when this process
                                     * last saw it: guesses, checked */
};

int co_format(struct ts_store *s);
void co_attach(struct co_tree *t, struct ts_store *s);

int co_search(struct co_tree *t, uint64_t key, void *val);
int co_insert(struct co_tree *t, uint64_t key, const void *val);
int co_delete(struct co_tree *t, uint64_t key);

typedef int (*co_visit_fn)(void *arg, uint64_t key, const void *val);
long long co_range(struct co_tree *t, uint64_t lo, uint64_t hi,
                   co_visit_fn fn, void *arg);

int co_check(struct co_tree *t, char *why, size_t len);

/* What the byte at off holds: 1 the value heap, 2 the segment records,
 * 3 the index, 4 the heap's lane records, 0 none of them. */
int co_page_kind(struct co_tree *t, uint64_t off);

#endif
