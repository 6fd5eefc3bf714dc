/* tree_opts.h: the options every program of the search-tree suite accepts
 * with one meaning (libxac/suites/search-tree.json, docs/trees.md).
 *
 * The agent passes every suite parameter to every program of the suite
 * (docs/suites.md), so tree_insert, tree_blocks, bdb_insert and lmdb_insert
 * all accept these two, each mapping them onto its own mechanism:
 *
 *   --durability durable|nondurable
 *       durable: an insert's transaction is on stable storage when it
 *       returns.  nondurable: atomic and isolated, not durable.  Every
 *       result says which in its param "durability", and names the
 *       program's own mechanism in its param "mode" (the program's --mode
 *       values, the finer choice by hand).
 *   --tree btree|btree-advisory|cobtree|all
 *       which LIBXAC search trees to measure.  The baselines (Berkeley DB,
 *       LMDB) have their own B-tree and measure it only with "all" or
 *       without --tree; given a single LIBXAC tree they measure nothing,
 *       say so on stderr and exit 0, so no baseline result ever runs under
 *       a job that names one LIBXAC tree.
 */
#ifndef XB_TREE_OPTS_H
#define XB_TREE_OPTS_H

/* "durable", "nondurable", NULL */
extern const char *const xb_st_durabilities[];
/* "btree", "btree-advisory", "cobtree", "all", NULL */
extern const char *const xb_st_trees[];

/* A baseline's --help text for --tree. */
#define XB_ST_BASELINE_TREE_HELP                                          \
    "LIBXAC trees of the search-tree suite: this program measures its "   \
    "own B-tree with all (or without --tree) and nothing otherwise"

/* For a baseline: 1 if --tree (NULL when absent) names one LIBXAC tree, in
 * which case a sentence saying that nothing is measured went to stderr. */
int xb_st_baseline_skips(const char *prog, const char *tree);

#endif
