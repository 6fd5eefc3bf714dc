/* kv_measure.h: one configuration of the search-tree driver, measured
 * (kv_driver.h describes the repetition and the results).
 *
 * kv_driver.c parses the options and plans the configurations;
 * kv_measure.c runs each one's repetitions (the processes, the timing, the
 * verification) and prints its results.  This header is what the two
 * share, not part of the store interface.
 */
#ifndef XB_KV_MEASURE_H
#define XB_KV_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "kv_driver.h"
#include "procs.h"

enum xb_kv_op { XB_KV_INSERT, XB_KV_SEARCH, XB_KV_SCAN, XB_KV_MIXED };

/* What each process leaves for the parent. */
struct xb_kv_proc_share {
    uint64_t finish_ns;
    long long visited;  /* scan */
    long long searches; /* search, and a mixed run's readers */
    struct xb_kv_counters at_open, at_end;
};

/* Memory the children share with the parent, cleared every repetition. */
struct xb_kv_shared {
    /* --op mixed: writers still inserting; the readers search until it is
     * 0. */
    int writers_left;
    struct xb_kv_proc_share proc[XB_PROCS_MAX];
    /* One per operation (count * passes).  --op mixed: the inserts'
     * (count), then count for the searches, where a reader's slots are
     * those of its slice of the loaded keys, holding its latest searches
     * (a ring). */
    double latency_us[];
};

struct xb_kv_run {
    const struct xb_kv_store *store;
    enum xb_kv_op op;
    const char *op_name;
    long long count, reps;
    long long passes;    /* --op search: times each process searches its
                          * keys (ops = count * passes) */
    int readers;         /* --op mixed: of procs, the processes that
                          * search (the last ones); the others insert */
    uint64_t seed;
    enum xb_order order;
    int verify;
    uint64_t *keys;      /* count (--op mixed: 2 * count; the first count
                          * loaded, the others inserted) */
    long long distinct;  /* of all the keys */
    struct xb_kv_shared *sh;
    size_t sh_bytes;
    double *all_latency; /* store->latency_top: every repetition's */
    long long nlatency;
    int nconfigs;        /* for the progress fraction */
};

/* Keys a run draws, and latency slots per pass: count, twice that for
 * --op mixed (the first count loaded, the others inserted). */
static inline long long xb_kv_keys(const struct xb_kv_run *run)
{
    return run->op == XB_KV_MIXED ? 2 * run->count : run->count;
}

/* Measure every repetition of cfg, the index-th configuration, in
 * directories under scratch, and print its results.  0; 1 if something
 * failed (said on stderr, no results); 2 if the store refused a process. */
int xb_kv_measure(struct xb_kv_run *run, const struct xb_kv_config *cfg,
                  const char *scratch, int index);

/* How progress lines and messages name cfg (store->label, or "sut
 * mode"). */
void xb_kv_label(const struct xb_kv_store *store,
                 const struct xb_kv_config *cfg, char *buf, size_t len);

/* "durable" if mode is one of store->durable_modes, else "nondurable". */
const char *xb_kv_durability_of(const struct xb_kv_store *store,
                                const char *mode);

#endif
