/* kv_driver.h: the search-tree driver, and the stores it drives.
 *
 * One driver runs the search-tree suite's workload (workload.h) on every
 * store it is given: Berkeley DB (bench/bdb_insert.c), LMDB
 * (bench/lmdb_insert.c) and the LIBXAC trees (trees/tree_kv.c, behind
 * bench/tree_insert.c and bench/tree_blocks.c).  A store supplies the few
 * calls of struct xb_kv_store; the driver does everything else the same
 * way for every store: the options, the workload, forking --procs
 * processes (procs.h), timing, sampling, verification and the results.
 *
 * One repetition of a configuration:
 *   1. the parent makes an empty store in a fresh directory (create); for
 *      --op search and scan it loads every key, untimed (open for
 *      XB_KV_LOAD, load, close);
 *   2. it syncs the file system (xb_settle) and forks P children; each
 *      opens the store itself (open for XB_KV_MEASURE: no handle crosses
 *      fork), reads its counters (observe), says it is ready, and waits;
 *   3. the parent starts the clock and releases them; child p inserts or
 *      looks up its slice of the key sequence, one transaction per
 *      operation (insert, search), timing each, or visits the whole store
 *      once (scan); it records when it finished, reads its counters again,
 *      closes and _exit()s;
 *      --op mixed: the last run->readers children search their slice of
 *      the loaded keys round and round until every other child has
 *      inserted its slice of count further keys of the sequence (with
 *      --readers 0 nobody searches: the same inserts into the same
 *      loaded store, the baseline the writers beside readers compare
 *      to);
 *   4. throughput = operations / (last child's finish - start); then the
 *      parent measures the log (log_bytes, or the counters' deltas), and
 *      with --verify reopens the store (open for XB_KV_CHECK) and checks
 *      that every key holds its value, that the store holds as many
 *      records as there are distinct keys, and the store's own invariants
 *      (check).
 *
 * The configurations: --mode picks one of the store's modes by hand;
 * --durability durable runs its durable_modes, --durability nondurable its
 * nondurable_modes, one after the other; without either, those of its
 * default_durability.  Given both, the mode must be of that durability
 * (else exit 2).  A store with a plan turns the selected modes into its
 * own list of configurations (the LIBXAC trees: one per tree and block
 * size); without one, each mode is one configuration and --tree other
 * than "all" measures nothing (tree_opts.h).  Every configuration runs all
 * its repetitions before the next.
 *
 * Results: suite "search-tree", benchmark = the op, sut = store->sut; a
 * metric appears when the store and the op give it samples:
 *   throughput            ops/s, one sample per repetition (scan: records
 *                         visited per second, all processes together)
 *   <op>_latency          us per insert or search, at most 100,000 samples:
 *                         100,000/reps evenly spaced ones from each
 *                         repetition, or with latency_top an evenly spaced
 *                         subsample of all repetitions' latencies together
 *   <op>_latency_top      us (latency_top): the 100 most expensive
 *                         operations of all repetitions, most expensive
 *                         first (thesis figure 5-3)
 *   bytes_per_key         bytes (bytes_used, insert): store bytes in use /
 *                         keys
 *   log_bytes_per_insert  bytes (insert): log_bytes() / keys, or the
 *                         delta of the counters' log_bytes from the
 *                         smallest opening value to the largest final one
 *                         (the counters are shared, and every process opened
 *                         before any inserted, so that covers exactly the
 *                         measured inserts of all processes)
 *   log_syncs_per_insert  ratio (insert, counters with a log): the same
 *                         delta of log_syncs / keys
 *   write_bytes_per_insert bytes (insert, not on tmpfs): what the timed
 *                         processes caused to be written to storage, by
 *                         the kernel's I/O accounting (getrusage of the
 *                         reaped children, ru_oublock: pages dirtied
 *                         through write() or a mapping; a page dirtied
 *                         again after its writeback counts again), / keys
 *   aborts                count (counters with aborts): transactions the
 *                         store aborted and retried during the timed
 *                         phase, one sample per process per repetition
 *                         (process p of repetition r is sample r * procs
 *                         + p; thesis Table C.11's "# Aborts")
 * and, with counters that count contention, per process per repetition
 * like aborts:
 *   retries_per_commit    ratio: conflict aborts / committed updating
 *                         transactions (the mean retries of an operation)
 *   retries_max           count: most aborts before one operation
 *                         committed
 *   aborted_time          ms: time spent in transactions that aborted
 *   wait_time             ms: time waiting to be admitted or for another
 *                         process's irrevocable transaction
 *   escalations           count: operations that ran irrevocable
 *   faults_per_commit     ratio: page faults that granted access (the
 *                         store's own, LIBXAC's xStats faults) / committed
 *                         updating transactions; aborted tries count too
 *   page_copies_per_commit ratio: pages copied into the process's own
 *                         memory (xStats pages_copied) / committed
 *                         updating transactions: a page another process
 *                         committed since this one last read it is
 *                         copied again, so with more processes more of
 *                         the pages an operation reads are copied
 *   new_pages_per_commit  ratio: of those copies, the ones into a page of
 *                         the process's memory it did not have yet
 *                         (xStats pages_new) / committed updating
 *                         transactions: the dear ones (a page allocated
 *                         and zeroed): they grow with the process count
 *   faults_per_search     ratio (search, a mixed run's readers, counters
 *                         that count contention): the process's faults per
 *                         search
 *   --op mixed, in place of throughput and <op>_latency:
 *   insert_throughput     ops/s: inserts / (last writer's finish - start)
 *   search_throughput     ops/s: searches / (last reader's finish - start)
 *   insert_latency        us, one per insert (sampled as above)
 *   search_latency        us, each reader's latest searches, at most one
 *                         per key of its slice
 *   (with --readers 0 no search_* results)
 *   and the insert results above, aborts and contention of the writers
 *   only.
 *   conflict_aborts_<kind> count: conflict aborts blamed on a page of that
 *                         kind (store->page_kind_names names them: for
 *                         the LIBXAC trees header, allocator, root,
 *                         inner, leaf, heap, segments, index, free), for
 *                         the kinds the configuration has (page_kinds_of).
 *                         Each process reports the pages (conflict[]);
 *                         the parent, which opens the store after the
 *                         run anyway, asks the store what they hold
 *                         (classify), so no timed process spends time on
 *                         it while others still run.
 * Params: count, procs, readers (--op mixed), durability ("durable" for
 * the durable_modes, else "nondurable"), mode, order, seed, key_bytes,
 * value_bytes, then the store's own (params).
 *
 * Exit status: 0, also when the options select nothing this store
 * measures (said on stderr); 1 if an operation or the verification failed
 * (said on stderr; no results for that configuration and none after it);
 * 2 for a bad option, or when the store refused a process (refused).
 */
#ifndef XB_KV_DRIVER_H
#define XB_KV_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "options.h"
#include "result.h"
#include "workload.h"

#define XB_KV_MAX_CONFIGS 16
#define XB_KV_MAX_VALUE 4096

/* One configuration the driver measures. */
struct xb_kv_config {
    const char *mode;       /* param "mode": one of store->modes */
    int procs;
    long long count;        /* keys in all */
    uint32_t value_bytes;   /* 1 .. XB_KV_MAX_VALUE */
    const void *own;        /* the store's own part (its plan sets it) */
};

/* What the parsed options ask for, for a store's plan. */
struct xb_kv_request {
    const char *tree;               /* --tree, NULL if not given */
    const char *const *modes;       /* the modes selected, NULL-terminated */
    int procs;
    long long count;
};

/* Why a process opens the store. */
enum xb_kv_use {
    XB_KV_MEASURE, /* a child, for the timed operations */
    XB_KV_LOAD,    /* the parent, to load the keys untimed */
    XB_KV_CHECK,   /* the parent, to verify and measure the store */
    XB_KV_RECOVER  /* the crash suite, after a crash: as the first process
                      to open it then, running the store's recovery
                      (crash/crash.h) */
};

/* open's answer when the store refuses one more process. */
#define XB_KV_REFUSED 1

/* Keys come as the number and as its big-endian bytes (workload.h). */
struct xb_kv_key {
    uint64_t n;
    unsigned char bytes[XB_KEY_BYTES];
};

/* Kinds of page a store may blame conflicts on (page_kind_names). */
#define XB_KV_PAGE_KINDS 10
/* Pages with conflicts one process reports, most aborts first; aborts on
 * pages beyond them count as the last kind (for the trees, "free"). */
#define XB_KV_CONFLICT_PAGES 256

struct xb_kv_conflict {
    uint64_t page, aborts;
};

/* A process's counters, read after it opened and after its last
 * operation (observe). */
struct xb_kv_counters {
    int has_log;     /* log_bytes and log_syncs count a log */
    int has_aborts;  /* aborts counts aborted transactions */
    int has_contention; /* the counters from commits on are counted */
    unsigned long long log_bytes, log_syncs; /* shared by all processes */
    unsigned long long aborts;               /* this process's */
    /* This process's contention (see the results above). */
    unsigned long long commits, conflict_aborts, retries_max, aborted_ns,
        waited_ns, escalations, faults, page_copies, new_pages;
    int nconflict; /* entries of conflict[] */
    struct xb_kv_conflict conflict[XB_KV_CONFLICT_PAGES];
    long long own[16]; /* the store's own readings, for its params */
};

struct xb_kv_store {
    const char *sut;      /* result sut: "bdb", "lmdb", "libxac" */
    const char *prog;     /* program name, for messages */
    const char *synopsis; /* first lines of --help */
    const char *default_op;              /* "insert", "search" or "scan" */
    const char *const *modes;            /* every --mode, NULL-terminated */
    const char *modes_help;
    const char *const *durable_modes;    /* --durability durable runs these */
    const char *const *nondurable_modes; /* --durability nondurable these */
    const char *default_durability;      /* without either option */
    const char *durability_help;
    const char *tree_help;
    const struct xb_opt *options; /* the store's own, ending with {0} */
    int latency_top; /* keep every latency: report <op>_latency_top */
    const char *refused; /* the sentence for XB_KV_REFUSED */
    /* Optional: why the system lets one process open a store at a time;
     * then --procs above 1 measures nothing and says this. */
    const char *one_process;

    /* Optional: the configurations to measure (at most XB_KV_MAX_CONFIGS)
     * for the request; their number, 0 when the options select nothing
     * this store measures, -1 for a bad option (both said on stderr). */
    int (*plan)(const struct xb_kv_request *rq, struct xb_kv_config *cfgs);
    /* Optional: how progress lines name a configuration (default: sut and
     * mode). */
    void (*label)(const struct xb_kv_config *cfg, char *buf, size_t len);
    /* Parent: make an empty store in the existing directory dir; 0 or -1
     * (said on stderr). */
    int (*create)(const struct xb_kv_config *cfg, const char *dir);
    /* Open the store for use: 0 with *h set; -1 (said on stderr); or
     * XB_KV_REFUSED. */
    int (*open)(const struct xb_kv_config *cfg, const char *dir,
                enum xb_kv_use use, void **h);
    /* One transaction inserting key -> value; 0 or -1 (said on stderr). */
    int (*insert)(void *h, const struct xb_kv_key *key,
                  const unsigned char *val, size_t vlen);
    /* Untimed load of keys[0..n) with their values; 0 or -1. */
    int (*load)(void *h, const uint64_t *keys, size_t n);
    /* Look key up: 1 found (value copied into val, of room *vlen, and
     * *vlen set to its length), 0 absent, -1 error. */
    int (*search)(void *h, const struct xb_kv_key *key, unsigned char *val,
                  size_t *vlen);
    /* Visit every record once; their number, or -1 on error. */
    long long (*scan)(void *h);
    /* 0, or -1 if closing failed (said on stderr). */
    int (*close)(void *h);
    /* Optional: read the counters; 0 or -1 (said on stderr). */
    int (*observe)(void *h, struct xb_kv_counters *c);
    /* Optional (with log_bytes): the parent, right after the store is
     * made and loaded, remembers where its log stands ... */
    void (*log_mark)(const struct xb_kv_config *cfg, const char *dir);
    /* ... and after the children, the bytes the inserts added to it. */
    double (*log_bytes)(const struct xb_kv_config *cfg, const char *dir);
    /* Optional: bytes of the store in use (bytes_per_key). */
    uint64_t (*bytes_used)(void *h);
    /* Optional: check the store's invariants; 0, or -1 with a sentence in
     * why. */
    int (*check)(void *h, char *why, size_t len);
    /* With contention counters: the name of each kind of page
     * (NULL-terminated, at most XB_KV_PAGE_KINDS; the last one also takes
     * the aborts on pages not reported), which of them a configuration
     * has (bit k: page_kind_names[k]), and, in the parent's store opened
     * for XB_KV_CHECK, the kind of each of pages[0 .. n) into kinds; 0 or
     * -1 (said on stderr). */
    const char *const *page_kind_names;
    unsigned (*page_kinds_of)(const struct xb_kv_config *cfg);
    int (*classify)(void *h, const uint64_t *pages, size_t n, int *kinds);
    /* The store's own result params; counters are process 1's at opening,
     * in the last repetition. */
    void (*params)(const struct xb_kv_config *cfg,
                   const struct xb_kv_counters *counters, xb_result *r);
};

/* "<program> crash ..." runs the crash-consistency suite on the store
 * (crash/crash.h); anything else the benchmark. */
int xb_kv_main(int argc, char **argv, const struct xb_kv_store *store);
/* The plan of a store without one of its own: each selected mode one
 * configuration; none (said on stderr) under a single LIBXAC --tree, above
 * one process where the store allows one, or when the store has no mode of
 * the durability asked for. */
int xb_kv_plan_modes(const struct xb_kv_store *store,
                     const struct xb_kv_request *rq, struct xb_kv_config *cfgs);
int xb_crash_main(int argc, char **argv, const struct xb_kv_store *store);

#endif
