/* tbench.h: the driver behind bench/tree_insert.c and bench/tree_blocks.c.
 *
 * It mirrors bench/common/kv_driver.h (bdb_insert, lmdb_insert) option for
 * option and result for result, so the LIBXAC trees are compared with
 * Berkeley DB and LMDB on the same workload (workload.h): --op
 * insert|search|scan, --count, --procs, --order, --seed, --reps, --dir,
 * --verify/--no-verify, --quick, and the search-tree suite's shared options
 * (bench/common/tree_opts.h):
 *   --durability nondurable|durable  xInit(dir, NONDURABLE) (default) or
 *                      xInit(dir, DURABLE) (struct ts_config); --mode is
 *                      this program's own spelling (both given must agree)
 *   --tree btree|btree-advisory|cobtree|all  the B+-tree, the B+-tree with
 *                      advisory calls (setPageAccess; --advisory is the
 *                      same), the CO B-tree, or every one the version has
 *                      (the serial version has no advisory calls).  Default
 *                      btree; with a sweep (tree_blocks) all.
 * Other tree options: --block-bytes, --value-bytes, and --version
 * transactional (LIBXAC, sut "libxac") | serial (plain mmap, one process).
 *
 * Durable, several processes and advisory calls need the transactional
 * version.  Asked for with --version serial they are an error (exit 2); a
 * program whose default is the serial version (tree_blocks) gets them from
 * the suite-wide options of a run meant for the transactional trees and
 * the baselines, so without --version it says on stderr that it measures
 * nothing and exits 0.
 *
 * One repetition: a fresh file; for search and scan the keys are loaded
 * untimed (through the serial version: same file format); P children open
 * the tree themselves, wait for the start signal, and process their slice
 * (insert/search) or scan everything; throughput = operations / time until
 * the last child finished.  With a sweep (tree_blocks) every B+-tree block
 * size 4 KiB .. 256 KiB (then, if selected, each again with advisory calls)
 * and the CO B-tree are measured in turn.
 *
 * Results (suite "search-tree", benchmark = op, sut "libxac"):
 *   throughput         ops/s, one sample per repetition
 *   <op>_latency       us per operation, at most 100,000 samples (evenly
 *                      spaced subsample of all repetitions')
 *   <op>_latency_top   us, the 100 most expensive operations of all
 *                      repetitions, most expensive first (thesis figure
 *                      5-3: the k-th sample is the k-th most expensive)
 *   bytes_per_key      file bytes in use / keys (insert only)
 *   log_bytes_per_insert  bytes (durable insert only): xStats() log_bytes
 *                      delta over the measured inserts / keys
 *   log_syncs_per_insert  ratio (durable insert only): syncs per insert, from
 *                      the log_syncs delta
 *   aborts             count (transactional version): transactions that
 *                      xend() aborted (and tree.c retried) during the timed
 *                      phase, one sample per process per repetition
 *                      (process p of repetition r is sample r * procs + p;
 *                      thesis Table C.11's "# Aborts")
 * Params: count, procs, durability, mode (= durability), order, seed,
 * key_bytes, value_bytes, tree (btree or cobtree), block_bytes (0 for the
 * CO B-tree), advisory, version.
 *
 * Exit status: 0; 1 if an operation or the verification failed; 2 for a
 * bad option or something this build cannot do (see above; --procs > 1
 * while LIBXAC refuses a second process, XAC_EBUSY).
 */
#ifndef TB_BENCH_H
#define TB_BENCH_H

struct tb_program {
    const char *prog;
    const char *synopsis;
    int sweep;                   /* tree_blocks: all block sizes + CO */
    const char *default_version; /* "transactional" or "serial" */
    const char *default_op;
};

int tb_main(int argc, char **argv, const struct tb_program *pg);

#endif
