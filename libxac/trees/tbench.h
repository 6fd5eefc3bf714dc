/* tbench.h: the driver behind bench/tree_insert.c and bench/tree_blocks.c.
 *
 * It mirrors bench/common/kv_driver.h (bdb_insert, lmdb_insert) option for
 * option and result for result, so the LIBXAC trees are compared with
 * Berkeley DB and LMDB on the same workload (workload.h): --op
 * insert|search|scan, --count, --procs, --order, --seed, --reps, --dir,
 * --verify/--no-verify, --quick, --mode nondurable|durable (the store's
 * durability, struct ts_config; durable needs the transactional version).
 * Tree options: --tree
 * btree|cobtree, --block-bytes, --advisory, --value-bytes, and --version
 * transactional (LIBXAC, sut "libxac") | serial (plain mmap, one process).
 *
 * One repetition: a fresh file; for search and scan the keys are loaded
 * untimed (through the serial version: same file format); P children open
 * the tree themselves, wait for the start signal, and process their slice
 * (insert/search) or scan everything; throughput = operations / time until
 * the last child finished.  With a sweep (tree_blocks) every B+-tree block
 * size 4 KiB .. 256 KiB and the CO B-tree are measured in turn.
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
 *   log_syncs_per_insert  syncs (durable insert only), the same for
 *                      log_syncs
 * Params: count, procs, durability, order, seed, key_bytes, value_bytes,
 * tree, block_bytes (0 for the CO B-tree), advisory, version.
 *
 * Exit status: 0; 1 if an operation or the verification failed; 2 for a
 * bad option or something this build cannot do (durable with the serial
 * version; --procs > 1 while LIBXAC refuses a second process, XAC_EBUSY).
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
