/* tree_kv.h: the LIBXAC search trees as a store of the search-tree driver
 * (bench/common/kv_driver.h), behind bench/tree_insert.c and
 * bench/tree_blocks.c.
 *
 * The driver gives the trees the same workload, options and results as
 * Berkeley DB and LMDB (bdb_insert, lmdb_insert); this store adds what
 * only the trees have:
 *
 *   --durability nondurable|durable  xInit(dir, NONDURABLE) (the default)
 *                      or xInit(dir, DURABLE) (struct ts_config); --mode
 *                      is this program's spelling of it (both given must
 *                      agree)
 *   --tree btree|btree-advisory|cobtree|all  the B+-tree, the B+-tree with
 *                      advisory calls (setPageAccess; --advisory is the
 *                      same), the CO B-tree, or every one the version has
 *                      (the serial version has no advisory calls).  Default
 *                      btree; with a sweep (tree_blocks) all.
 *   --block-bytes, --value-bytes, and --version transactional (LIBXAC,
 *                      sut "libxac") | serial (plain mmap, one process).
 *
 * Durable, several processes and advisory calls need the transactional
 * version.  Asked for with --version serial they are an error (exit 2); a
 * program whose default is the serial version (tree_blocks) gets them from
 * the suite-wide options of a run meant for the transactional trees and
 * the baselines, so without --version it says on stderr that it measures
 * nothing and exits 0.
 *
 * The configurations (the driver's plan): one tree at 4 KiB blocks, or
 * with a sweep (tree_blocks) every B+-tree block size 4 KiB .. 256 KiB
 * (then, if selected, each again with advisory calls) and the CO B-tree,
 * measured in turn.  A fresh file each repetition; for search and scan the
 * keys are loaded untimed through the serial version (same file format, no
 * transaction overhead), and the parent verifies through it too.
 *
 * Results (kv_driver.h), sut "libxac": throughput, <op>_latency,
 * <op>_latency_top, bytes_per_key (insert); with --durability durable
 * log_bytes_per_insert and log_syncs_per_insert (insert), from xStats()
 * read by each process after opening and after its last operation; and in
 * the transactional version aborts, the transactions xend() aborted (and
 * tree.c retried) during the timed phase.  Params: those of every store,
 * mode (= durability), then tree (btree or cobtree), block_bytes (0 for
 * the CO B-tree), advisory, version, and for the transactional version
 * LIBXAC's memory regime as process 1 saw it, recorded like a baseline's
 * cache size: keep_pages, write_protect (uffd|mprotect), access_control
 * (pte|mprotect), working_mib.
 *
 * --procs above 1 while LIBXAC refuses a second live process (XAC_EBUSY)
 * exits 2.
 */
#ifndef TK_TREE_KV_H
#define TK_TREE_KV_H

#include "kv_driver.h"

struct tk_program {
    const char *prog;
    const char *synopsis;
    int sweep;                   /* tree_blocks: all block sizes + CO */
    const char *default_version; /* "transactional" or "serial" */
    const char *default_op;
};

/* The store for program pg (tree_insert or tree_blocks). */
const struct xb_kv_store *tk_store(const struct tk_program *pg);

#endif
