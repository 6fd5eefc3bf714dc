/* tree.h: search trees in a memory-mapped file, serial or transactional.
 *
 * The manual for the tree modules (docs/trees.md has the long version):
 *
 *   struct ts_store s;                       // tstore.h
 *   ts_open(&s, TS_XAC, dir, "tree.db", len, advisory);
 *   struct tr_config cfg = {TR_BTREE, 4096, 512};
 *   tr_create(&s, &cfg);                     // once, on a new file
 *   tr_tree *t;
 *   tr_open(&s, &t);
 *   tr_insert(t, key, value);                // one transaction each
 *   tr_search(t, key, buf);
 *   tr_close(t);
 *   ts_close(&s);
 *
 * Two trees share the file format of tfile.h: TR_BTREE, a B+-tree with
 * nodes of block_bytes (btree.h), and TR_COBTREE, a cache-oblivious B-tree
 * (cobtree.h).  Keys are 64-bit unsigned integers, unique; values are
 * value_bytes (1 .. 4096) opaque bytes.
 *
 * Every function below is one transaction on a TS_XAC store, retried until
 * it commits (xbegin ... xend == ABORTED → again), and plain code on a
 * TS_SERIAL store; lookups and range queries are read-only transactions
 * (xbeginQuery).  A range query's visitor runs inside the transaction: on
 * a retry it is called again from the start.
 *
 * Errors: negative TR_E* codes (terr.h), XAC_E* codes, or an errno value
 * from a failed commit; tr_strerror() describes them.
 */
#ifndef TR_TREE_H
#define TR_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "terr.h"
#include "tstore.h"

enum tr_kind { TR_BTREE = 1, TR_COBTREE = 2 };

struct tr_config {
    enum tr_kind kind;
    uint32_t block_bytes; /* TR_BTREE: 4096 .. 262144, a power of two */
    uint32_t value_bytes; /* 1 .. 4096 */
};

typedef struct tr_tree tr_tree;

/** Format an empty tree in the store (whose file should be new).
 * @return 0; TR_EINVAL for a bad configuration; TR_EFULL if the mapping
 *     is too small; a commit error. */
int tr_create(struct ts_store *s, const struct tr_config *cfg);

/** Attach to the tree in the store.  @return 0; TR_EBADFILE (with
 * tr_bad_file_reason() saying why); ENOMEM. */
int tr_open(struct ts_store *s, tr_tree **out);
const char *tr_bad_file_reason(void);
void tr_close(tr_tree *t);

/** The tree's configuration, as read from its header at tr_open(). */
void tr_config_of(const tr_tree *t, struct tr_config *cfg);

/** Insert or replace.  @return 0 added, 1 replaced, TR_EFULL (nothing
 * changed), or a commit error. */
int tr_insert(tr_tree *t, uint64_t key, const void *val);

/** Look up; copies the value into val (may be NULL).  @return 1 found,
 * 0 absent. */
int tr_search(tr_tree *t, uint64_t key, void *val);

/** @return 1 removed, 0 absent, or a commit error. */
int tr_delete(tr_tree *t, uint64_t key);

/** Visit keys in [lo, hi] ascending until fn (may be NULL) returns
 * non-zero.  @return the number of keys visited. */
typedef int (*tr_visit_fn)(void *arg, uint64_t key, const void *val);
long long tr_range(tr_tree *t, uint64_t lo, uint64_t hi, tr_visit_fn fn,
                   void *arg);

/** Check every invariant of the tree (btree.h, cobtree.h) in one
 * read-only transaction.  @return 0, or -1 with a sentence in why. */
int tr_check(tr_tree *t, char *why, size_t len);

/** Bytes of the file in use (allocated and not freed). */
uint64_t tr_bytes_used(tr_tree *t);

/** What a page of the tree file holds (tr_page_kinds): the header, an
 * allocator record (page 1, an arena, a CO B-tree heap lane's record); a
 * B+-tree's root, inner nodes and leaves; a CO B-tree's value heap,
 * segment records and index; or nothing in use. */
enum tr_page_kind {
    TR_PAGE_HEADER,
    TR_PAGE_ALLOCATOR,
    TR_PAGE_ROOT,
    TR_PAGE_INNER,
    TR_PAGE_LEAF,
    TR_PAGE_HEAP,
    TR_PAGE_SEGMENTS,
    TR_PAGE_INDEX,
    TR_PAGE_FREE,
    TR_PAGE_KINDS /* how many there are */
};

/** The name of a kind: "header", "allocator", "root", "inner", "leaf",
 * "heap", "segments", "index", "free". */
const char *tr_page_kind_name(enum tr_page_kind kind);

/** What pages @p pages[0 .. n) (page numbers: byte offset / 4096) hold
 * now, into @p kinds, in one read-only transaction.  For telling which
 * records LIBXAC's conflicts fall on (xConflicts()).  @return 0 or
 * ENOMEM. */
int tr_page_kinds(tr_tree *t, const uint64_t *pages, size_t n,
                  enum tr_page_kind *kinds);

/** Mapping length to create a tree for n keys with room to spare. */
size_t tr_file_bytes(const struct tr_config *cfg, uint64_t n);

const char *tr_kind_name(enum tr_kind kind);
const char *tr_strerror(int code);

#endif
