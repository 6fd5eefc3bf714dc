/* tfile.h: the layout every tree file shares, and its space allocator.
 *
 *   page 0  struct tf_header: magic "XACTREE1", format version, which tree,
 *           its configuration and its roots.  Written at creation and when
 *           a root moves (B+-tree root split, CO B-tree array resize).
 *   page 1  struct tf_alloc: the allocator (a bump pointer and a short
 *           first-fit free list).  Kept off page 0 so that a transaction
 *           that allocates does not conflict with every reader of the root.
 *   pages 2 … 2 + TF_ARENAS - 1
 *           struct tf_arena, one a page: a run of TF_ARENA_CHUNK bytes the
 *           allocator gave to the processes whose pid is i modulo
 *           TF_ARENAS.  Small allocations (a B+-tree node) come from the
 *           process's arena, so processes that split nodes at the same
 *           time write different pages; page 1 is written only when an
 *           arena takes its next run, or for a large extent.
 *   TF_DATA… extents handed out by tf_alloc(), 4096-byte aligned.
 *
 * All references inside the file are byte offsets from its start, never
 * pointers, so the file can be mapped at any address; 0 means "none".
 * Every function here runs inside the caller's transaction.
 */
#ifndef TF_FILE_H
#define TF_FILE_H

#include <stdint.h>

#include "tstore.h"

#define TF_MAGIC 0x3145455254434158ull /* "XACTREE1" little-endian */
#define TF_FORMAT 5u /* 2: B+-tree leaves keep values in slots (btree.c);
                      * 3: so do CO B-tree segments;
                      * 4: CO B-tree values in a heap that never moves
                      * them (h_co_heap), segments as records;
                      * 5: allocation arenas (pages 2 ...), CO B-tree
                      * heap lanes one a page (h_co_lanes) */
#define TF_PAGE 4096u
#define TF_ARENAS 64u                  /* arena records, one a page */
#define TF_ARENA_CHUNK (32u * TF_PAGE) /* what an arena takes at a time */
#define TF_ARENA_MAX (TF_ARENA_CHUNK / 4) /* larger extents skip arenas */
#define TF_DATA ((2u + TF_ARENAS) * TF_PAGE) /* first allocatable byte */
#define TF_MAX_FREE 200
#define TF_HEAP_CHUNKS 20u /* chunks of a CO B-tree heap lane: 64 << 19 */
#define TF_HEAP_LANES 64u  /* CO B-tree heap lanes, one a page */

enum tf_kind { TF_BTREE = 1, TF_COBTREE = 2 };

/* One lane of the CO B-tree's value heap (cobtree.h), on a page of its
 * own: its entries [0, n) are live, n lies in [l_hint, l_hint +
 * CO_HEAP_WINDOW], and chunk k holds CO_HEAP_BASE << k entries. */
struct tf_heap_lane {
    uint64_t l_hint;
    uint32_t l_chunks; /* chunks allocated */
    uint32_t l_pad;
    uint64_t l_chunk[TF_HEAP_CHUNKS]; /* chunk offsets */
};

struct tf_header {
    uint64_t h_magic;
    uint32_t h_format;
    uint32_t h_kind;         /* enum tf_kind */
    uint64_t h_file_bytes;   /* mapping length the tree was created for */
    uint32_t h_value_bytes;
    uint32_t h_block_bytes;  /* B+-tree node size; 0 for the CO B-tree */
    uint32_t h_deleted;      /* 1 once any delete happened */
    uint32_t h_pad;
    /* B+-tree */
    uint64_t h_bt_root;      /* offset of the root node */
    uint32_t h_bt_height;    /* levels, 1 = the root is a leaf */
    uint32_t h_pad2;
    /* CO B-tree: the packed memory array and its index */
    uint64_t h_co_recs;      /* segment records: count, keys, heap
                              * indexes of each segment (cobtree.h) */
    uint64_t h_co_index;     /* struct co_node[2*segments-1], vEB order */
    uint64_t h_co_capacity;  /* slots = segments * seg_slots */
    uint32_t h_co_seg_slots; /* slots per segment, a power of two */
    uint32_t h_co_lg_segs;   /* log2(segments) */
    /* CO B-tree value heap (cobtree.h): TF_HEAP_LANES struct
     * tf_heap_lane, one a page, from this offset */
    uint64_t h_co_lanes;
};

_Static_assert(sizeof(struct tf_header) <= TF_PAGE, "the header is page 0");

struct tf_extent {
    uint64_t e_off, e_len;
};

struct tf_alloc {
    uint64_t a_next;  /* bump pointer: first never-allocated byte */
    uint32_t a_nfree;
    uint32_t a_pad;
    struct tf_extent a_free[TF_MAX_FREE];
};

/* An arena: [ar_next, ar_end) is allocated from page 1 and not yet
 * handed out. */
struct tf_arena {
    uint64_t ar_next, ar_end;
};

static inline struct tf_header *tf_header(const struct ts_store *s)
{
    return ts_at(s, 0);
}

/** Format pages 0 … TF_DATA (the rest of the header is the tree's). */
void tf_format(struct ts_store *s, enum tf_kind kind, uint32_t value_bytes,
               uint32_t block_bytes);

/** 0 if the header is one this code reads, else a sentence why not. */
const char *tf_check_header(const struct ts_store *s);

/** Allocate @p len bytes (rounded up to 4096), zero-filled only if never
 * used before: up to TF_ARENA_MAX from this process's arena, larger
 * extents from page 1.  @return the offset, or 0 if the file is full. */
uint64_t tf_alloc(struct ts_store *s, uint64_t len);

/** Could tf_alloc(len) succeed @p n times in a row in this process? */
int tf_can_alloc(const struct ts_store *s, uint64_t len, uint64_t n);

/** Give an extent back (forgotten if the free list is full). */
void tf_free(struct ts_store *s, uint64_t off, uint64_t len);

/** Bytes handed out and not freed (for the checker and reports). */
uint64_t tf_used(const struct ts_store *s);

/** Is the byte at @p off the header (1), an allocator record (2), or
 * neither (0)? */
int tf_meta_page(uint64_t off);

#endif
