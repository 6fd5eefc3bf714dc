/* btree.h: a B+-tree in a memory-mapped file (thesis section 5.2).
 *
 * Layout.  Every node is one block of h_block_bytes (4 KiB ... 256 KiB, a
 * power of two) allocated with tf_alloc():
 *
 *   struct bt_node (16 bytes): leaf flag, key count n, next leaf
 *   leaf:      keys uint64_t[cap_leaf], then values value_bytes[cap_leaf]
 *   internal:  keys uint64_t[cap_int], then children uint64_t[cap_int+1]
 *
 * Keys are unique and sorted in every node.  Child j of an internal node
 * holds the keys k with key[j-1] <= k < key[j].  All leaves are at depth
 * h_bt_height and are chained left to right through "next" (range scans).
 *
 * Algorithms.  Insert descends remembering the path, inserts into the
 * leaf, and splits full nodes bottom-up (a full leaf keeps its lower half;
 * the separator is the new right node's first key); a root split adds a
 * level.  Insert of an existing key replaces its value.  Delete removes
 * the key from its leaf and never merges nodes (as many production B-trees
 * do), so after a delete nodes may be under-full or empty.
 *
 * Invariants (bt_check): sorted unique keys within each node and within
 * the separator bounds inherited from the parent; 1 <= n <= cap for
 * internal nodes; n <= cap for leaves and, while the tree has seen no
 * delete, n >= floor(cap/2) for every node but the root; equal leaf depth;
 * the leaf chain visits the leaves in key order and ends with 0.
 *
 * Advisory mode (store opened with advisory calls): the descent declares
 * each node's header and key pages READ, and the leaf's pages an insert
 * will shift READ_WRITE, so that they take no page fault.
 *
 * These functions are the serial code: they run inside the caller's
 * transaction (tree.c) and never begin or end one.
 */
#ifndef BT_BTREE_H
#define BT_BTREE_H

#include <stddef.h>
#include <stdint.h>

#include "tstore.h"

struct bt_tree {
    struct ts_store *bt_s;
    uint32_t bt_block, bt_vbytes;
    uint32_t bt_cap_leaf, bt_cap_int;
};

/* Smallest and largest block size. */
#define BT_MIN_BLOCK 4096u
#define BT_MAX_BLOCK (256u * 1024u)

/* Capacities for a block size and value size (0 if the block is too
 * small for 2 records per leaf). */
uint32_t bt_cap_leaf(uint32_t block, uint32_t vbytes);
uint32_t bt_cap_int(uint32_t block);

/** Allocate the empty root leaf (after tf_format).  @return 0 or
 * TR_EFULL. */
int bt_format(struct ts_store *s);
void bt_attach(struct bt_tree *t, struct ts_store *s);

int bt_search(struct bt_tree *t, uint64_t key, void *val);
int bt_insert(struct bt_tree *t, uint64_t key, const void *val);
int bt_delete(struct bt_tree *t, uint64_t key);

/* Visit keys in [lo, hi] ascending until fn returns non-zero; returns the
 * number visited.  fn may be NULL (count only). */
typedef int (*bt_visit_fn)(void *arg, uint64_t key, const void *val);
long long bt_range(struct bt_tree *t, uint64_t lo, uint64_t hi,
                   bt_visit_fn fn, void *arg);

/* 0, or -1 with a sentence in why. */
int bt_check(struct bt_tree *t, char *why, size_t len);

/* Visit every node: fn(arg, offset, depth) with the root at depth 1 and
 * the leaves at the tree's height. */
typedef void (*bt_node_fn)(void *arg, uint64_t off, uint32_t depth);
void bt_walk(struct bt_tree *t, bt_node_fn fn, void *arg);

#endif
