/* kv_driver.h: the search-tree baseline driver shared by bdb_* and lmdb_*.
 *
 * A store (Berkeley DB, LMDB) supplies the few calls in struct xb_kv_store;
 * the driver does everything else the same way for every store: options,
 * the workload (workload.h), forking --procs processes, timing, sampling,
 * verification and the results.
 *
 * One repetition of --op insert:
 *   1. the parent creates an empty store in a fresh directory (create);
 *   2. it forks P children; each opens the store itself (open: no handle
 *      crosses fork), says it is ready through a pipe, and waits;
 *   3. the parent starts the clock and releases them; child p inserts its
 *      slice of the key sequence, one transaction per insert (insert),
 *      timing each, records when it finished, closes and _exit()s;
 *   4. throughput = count / (last child's finish - start); the parent
 *      measures log_bytes, and with --verify reopens the store and checks
 *      that every key holds its value (search).
 * --op search loads the keys untimed (load), then the children look up
 * their slices; --op scan loads them and times one cursor pass per
 * process over the whole store (scan).
 *
 * Durability (tree_opts.h): --mode picks one of the store's modes;
 * --durability durable runs the store's durable_modes, --durability
 * nondurable its nondurable_modes, one after the other (each with all its
 * repetitions); without either, "durable".  Given both, the mode must be of
 * that durability (else exit 2).  --tree other than "all" measures nothing
 * (tree_opts.h).
 *
 * Results: suite "search-tree", benchmark = the op, sut = store->sut.
 *   insert: "throughput" ops/s (one sample per repetition),
 *           "insert_latency" us (per insert, at most 100,000 samples, an
 *           evenly spaced subsample when there are more),
 *           "log_bytes_per_insert" bytes (one sample per repetition);
 *   search: "throughput", "search_latency";
 *   scan:   "throughput" (records visited per second, all processes).
 * Params: count, procs, durability ("durable" for the durable_modes, else
 * "nondurable"), mode, order, seed, key_bytes, value_bytes and the store's
 * own knob (cache_mib, map_mib).  No "tree": the store is its own.
 *
 * Exit status: 0; 1 if any insert, search or verification failed (said on
 * stderr); 2 for a bad option.
 */
#ifndef XB_KV_DRIVER_H
#define XB_KV_DRIVER_H

#include <stddef.h>
#include <stdint.h>

struct xb_kv_config {
    const char *mode; /* one of store->modes */
    long long knob;   /* store->knob_name's value */
    int procs;
};

struct xb_kv_store {
    const char *sut;               /* "bdb", "lmdb" */
    const char *prog;              /* program name, for messages */
    const char *synopsis;          /* first lines of --help */
    const char *const *modes;      /* every --mode, NULL-terminated */
    const char *modes_help;
    const char *const *durable_modes;    /* --durability durable runs these */
    const char *const *nondurable_modes; /* --durability nondurable these */
    const char *durability_help;   /* what the two map to in this store */
    const char *knob_name;         /* option/param, e.g. "cache-mib" */
    const char *knob_param;        /* result param, e.g. "cache_mib" */
    const char *knob_help;
    long long knob_default, knob_min, knob_max;

    /* Parent: make an empty store in the existing directory dir. */
    int (*create)(const struct xb_kv_config *cfg, const char *dir);
    /* Any process: open the store; NULL on failure (said on stderr). */
    void *(*open)(const struct xb_kv_config *cfg, const char *dir);
    /* One transaction inserting key -> value; 0 or -1 (said on stderr). */
    int (*insert)(void *h, const unsigned char *key, size_t klen,
                  const unsigned char *val, size_t vlen);
    /* Untimed bulk load of n records in large transactions; 0 or -1. */
    int (*load)(void *h, const uint64_t *keys, size_t n);
    /* Look key up: 1 found (value copied, *vlen set), 0 absent, -1 error. */
    int (*search)(void *h, const unsigned char *key, size_t klen,
                  unsigned char *val, size_t *vlen);
    /* Visit every record with a cursor; the count, or -1 on error. */
    long long (*scan)(void *h);
    void (*close)(void *h);
    /* Parent, after the children finished: bytes the inserts added to the
     * store's log (or data file); see each store for which. */
    double (*log_bytes)(const struct xb_kv_config *cfg, const char *dir);
    /* Parent, right after create: remember the baseline for log_bytes. */
    void (*log_mark)(const struct xb_kv_config *cfg, const char *dir);
};

int xb_kv_main(int argc, char **argv, const struct xb_kv_store *store);

#endif
