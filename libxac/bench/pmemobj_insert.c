/* pmemobj_insert: PMDK's libpmemobj as a store of the search-tree driver.
 *
 * A pool file (kv.pmemobj) in the directory under test holds a persistent
 * hash map: a root object with the bucket array's handle, the number of
 * buckets (a power of two, at least --count) and the number of records;
 * each record is an object {key, next, value length, value} chained from
 * its bucket.  Every insert is one transaction, TX_BEGIN ... TX_END: the
 * bucket's head and the record count are snapshotted into PMDK's undo log
 * (pmemobj_tx_add_range_direct) before they change, a replaced value too,
 * and a new record is allocated inside the transaction and persisted
 * before the commit.  On an ordinary file PMDK makes all of this durable
 * through its own flushing, msync(MS_SYNC) of the changed pages, so the one
 * mode is durable; --durability nondurable measures nothing (says so).
 * A search or a scan reads the mapping directly: PMDK has no read
 * transactions.  The scan visits the buckets in order (a hash map has no
 * key order).  One process at a time: PMDK locks the pool file, so
 * --procs above 1 measures nothing (says so on stderr).
 * This file is the store; the driver, its options and the results are
 * described in common/kv_driver.h.
 */
/* xaclab-link: -lpmemobj */
#include "kv_driver.h"
#include "scratch.h"
#include "tree_opts.h"
#include "workload.h"

#include <errno.h>
#include <libpmemobj.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "pmemobj_insert"
#define POOL_FILE "kv.pmemobj"
#define LAYOUT "xaclab-kv-1"
#define MIN_BUCKETS 1024

static long long pool_mib = 0; /* 0: from --count */

struct root {
    PMEMoid buckets; /* PMEMoid[nbuckets] */
    uint64_t nbuckets;
    uint64_t records;
};

struct record {
    uint64_t key;
    PMEMoid next;
    uint32_t vlen;
    unsigned char value[];
};

struct pm {
    PMEMobjpool *pop;
    struct root *root;
    PMEMoid *buckets;
};

static long long pool_bytes_for(const struct xb_kv_config *cfg)
{
    if (pool_mib > 0)
        return pool_mib << 20;
    /* A record is the value, 32 bytes of header and PMDK's allocation
     * header and rounding (up to 128 bytes); twice that, plus the buckets
     * and 16 MiB for the heap's own structures and the undo logs. */
    long long per = (long long)cfg->value_bytes + 160;
    long long bytes = 2 * cfg->count * per + 16 * cfg->count + (16LL << 20);
    return bytes < (long long)PMEMOBJ_MIN_POOL ? (long long)PMEMOBJ_MIN_POOL
                                               : bytes;
}

static uint64_t buckets_for(long long count)
{
    uint64_t n = MIN_BUCKETS;
    while (n < (uint64_t)count)
        n <<= 1;
    return n;
}

static uint64_t bucket_of(const struct pm *h, uint64_t key)
{
    /* Fibonacci hashing: the keys are random or sorted, both spread. */
    return (key * 0x9e3779b97f4a7c15ULL) >> 32 & (h->root->nbuckets - 1);
}

static int pm_close(void *hv)
{
    struct pm *h = hv;
    pmemobj_close(h->pop);
    free(h);
    return 0;
}

static int pm_open(const struct xb_kv_config *cfg, const char *dir,
                   enum xb_kv_use use, void **out)
{
    (void)cfg;
    (void)use;
    char path[4096];
    struct pm *h = calloc(1, sizeof *h);
    if (h == NULL)
        return -1;
    h->pop = pmemobj_open(xb_path(path, sizeof path, dir, POOL_FILE), LAYOUT);
    if (h->pop == NULL) {
        fprintf(stderr, "%s: pmemobj_open %s: %s\n", PROG, path,
                pmemobj_errormsg());
        free(h);
        return errno == EWOULDBLOCK || errno == EAGAIN ? XB_KV_REFUSED : -1;
    }
    h->root = pmemobj_direct(pmemobj_root(h->pop, sizeof *h->root));
    h->buckets = pmemobj_direct(h->root->buckets);
    if (h->root == NULL || h->buckets == NULL) {
        fprintf(stderr, "%s: %s has no bucket array.\n", PROG, path);
        pm_close(h);
        return -1;
    }
    *out = h;
    return 0;
}

static int pm_create(const struct xb_kv_config *cfg, const char *dir)
{
    char path[4096];
    PMEMobjpool *pop =
        pmemobj_create(xb_path(path, sizeof path, dir, POOL_FILE), LAYOUT,
                       (size_t)pool_bytes_for(cfg), 0600);
    if (pop == NULL) {
        fprintf(stderr, "%s: pmemobj_create %s: %s\n", PROG, path,
                pmemobj_errormsg());
        return -1;
    }
    struct root *root = pmemobj_direct(pmemobj_root(pop, sizeof *root));
    /* volatile: TX_BEGIN is a setjmp, and these are read after a longjmp. */
    volatile uint64_t nb = buckets_for(cfg->count);
    volatile int rc = 0;
    TX_BEGIN(pop) {
        pmemobj_tx_add_range_direct(root, sizeof *root);
        root->buckets = pmemobj_tx_zalloc(nb * sizeof(PMEMoid), 1);
        root->nbuckets = nb;
        root->records = 0;
    } TX_ONABORT {
        fprintf(stderr, "%s: cannot make the bucket array: %s\n", PROG,
                pmemobj_errormsg());
        rc = -1;
    } TX_END
    pmemobj_close(pop);
    return rc;
}

static struct record *find(const struct pm *h, uint64_t key)
{
    PMEMoid at = h->buckets[bucket_of(h, key)];
    while (!OID_IS_NULL(at)) {
        struct record *rec = pmemobj_direct(at);
        if (rec == NULL) /* not in this pool: the chain ends here */
            return NULL;
        if (rec->key == key)
            return rec;
        at = rec->next;
    }
    return NULL;
}

/* Inside a transaction: fill the new record n (oid) and put it at the
 * head of its bucket; unlink and free old, the record it replaces, if any. */
static void add_record(struct pm *h, PMEMoid oid, struct record *n,
                       const struct record *old, uint64_t key,
                       const unsigned char *val, size_t vlen)
{
    PMEMoid *head = &h->buckets[bucket_of(h, key)];
    n->key = key;
    n->next = *head;
    n->vlen = (uint32_t)vlen;
    memcpy(n->value, val, vlen);
    pmemobj_persist(h->pop, n, sizeof *n + vlen);
    pmemobj_tx_add_range_direct(head, sizeof *head);
    *head = oid;
    if (old == NULL) {
        pmemobj_tx_add_range_direct(&h->root->records,
                                    sizeof h->root->records);
        h->root->records++;
        return;
    }
    for (PMEMoid *p = &n->next; !OID_IS_NULL(*p);) {
        struct record *at = pmemobj_direct(*p);
        if (at == NULL)
            return;
        if (at == old) {
            PMEMoid gone = *p;
            pmemobj_tx_add_range_direct(p, sizeof *p);
            *p = old->next;
            pmemobj_tx_free(gone);
            return;
        }
        p = &at->next;
    }
}

static int put(struct pm *h, uint64_t key, const unsigned char *val,
               size_t vlen)
{
    volatile int rc = 0; /* set after TX_BEGIN's setjmp returned again */
    TX_BEGIN(h->pop) {
        struct record *rec = find(h, key);
        if (rec != NULL && rec->vlen == vlen) {
            pmemobj_tx_add_range_direct(rec->value, vlen);
            memcpy(rec->value, val, vlen);
        } else {
            /* A new record (or one whose value changes size: replaced). */
            PMEMoid oid = pmemobj_tx_alloc(sizeof *rec + vlen, 2);
            struct record *n = pmemobj_direct(oid);
            if (n == NULL) /* pmemobj_tx_alloc aborts by itself; for the analyser */
                pmemobj_tx_abort(ENOMEM);
            else
                add_record(h, oid, n, rec, key, val, vlen);
        }
    } TX_ONABORT {
        fprintf(stderr, "%s: insert aborted: %s\n", PROG, pmemobj_errormsg());
        rc = -1;
    } TX_END
    return rc;
}

static int pm_insert(void *hv, const struct xb_kv_key *key,
                     const unsigned char *val, size_t vlen)
{
    return put(hv, key->n, val, vlen);
}

static int pm_load(void *hv, const uint64_t *keys, size_t n)
{
    unsigned char vb[XB_VALUE_BYTES];
    for (size_t i = 0; i < n; i++) {
        xb_workload_value(keys[i], vb, sizeof vb);
        if (put(hv, keys[i], vb, sizeof vb) != 0)
            return -1;
    }
    return 0;
}

static int pm_search(void *hv, const struct xb_kv_key *key,
                     unsigned char *val, size_t *vlen)
{
    const struct record *rec = find(hv, key->n);
    if (rec == NULL)
        return 0;
    memcpy(val, rec->value, rec->vlen < *vlen ? rec->vlen : *vlen);
    *vlen = rec->vlen;
    return 1;
}

/* Visit every record; with check, also that each is in its own bucket
 * and the chains end (at most records + 1 steps).  The number visited, or
 * -1 with a sentence in why. */
static long long walk(const struct pm *h, char *why, size_t len)
{
    long long n = 0, limit = (long long)h->root->records + 1;
    volatile unsigned char sink = 0;
    for (uint64_t b = 0; b < h->root->nbuckets; b++) {
        for (PMEMoid at = h->buckets[b]; !OID_IS_NULL(at);) {
            const struct record *rec = pmemobj_direct(at);
            if (rec == NULL || ++n > limit) {
                snprintf(why, len, "bucket %llu: a chain goes past the "
                         "%llu records the root counts",
                         (unsigned long long)b,
                         (unsigned long long)h->root->records);
                return -1;
            }
            if (bucket_of(h, rec->key) != b) {
                snprintf(why, len, "key %016llx is in bucket %llu, not %llu",
                         (unsigned long long)rec->key,
                         (unsigned long long)b,
                         (unsigned long long)bucket_of(h, rec->key));
                return -1;
            }
            sink ^= rec->value[0];
            at = rec->next;
        }
    }
    (void)sink;
    return n;
}

static long long pm_scan(void *hv)
{
    char why[256];
    long long n = walk(hv, why, sizeof why);
    if (n < 0)
        fprintf(stderr, "%s: scan: %s\n", PROG, why);
    return n;
}

static int pm_check(void *hv, char *why, size_t len)
{
    const struct pm *h = hv;
    long long n = walk(h, why, len);
    if (n < 0)
        return -1;
    if ((uint64_t)n != h->root->records) {
        snprintf(why, len, "the chains hold %lld records, the root counts "
                 "%llu", n, (unsigned long long)h->root->records);
        return -1;
    }
    return 0;
}

static void pm_params(const struct xb_kv_config *cfg,
                      const struct xb_kv_counters *counters, xb_result *r)
{
    (void)counters;
    xb_param_int(r, "pool_mib", pool_bytes_for(cfg) >> 20);
}

int main(int argc, char **argv)
{
    static const char *const modes[] = {"durable", NULL};
    static const char *const durable[] = {"durable", NULL};
    static const char *const nondurable[] = {NULL};
    static const struct xb_opt options[] = {
        {"pool-mib", XB_OPT_INT, &pool_mib, 8, 1048576, NULL,
         "pool file size in MiB (default: twice the records' bytes plus "
         "16 MiB)"},
        {NULL, 0, NULL, 0, 0, NULL, NULL}};
    static const struct xb_kv_store store = {
        .sut = "pmemobj",
        .prog = PROG,
        .synopsis = "PMDK libpmemobj: a persistent hash map in a pool file, "
                    "one TX_BEGIN/TX_END transaction\nper insert; see "
                    "docs/benchmarks-systems.md.",
        .modes = modes,
        .modes_help = "durable, the only one (PMDK flushes every commit)",
        .durable_modes = durable,
        .nondurable_modes = nondurable,
        .default_durability = "durable",
        .durability_help = "durable: every commit flushed (msync on an "
                           "ordinary file); nondurable measures nothing",
        .tree_help = XB_ST_BASELINE_TREE_HELP,
        .options = options,
        .one_process = "PMDK lets one process open a pool at a time",
        .refused = "PMDK refused a second process on the pool.",
        .create = pm_create,
        .open = pm_open,
        .insert = pm_insert,
        .load = pm_load,
        .search = pm_search,
        .scan = pm_scan,
        .close = pm_close,
        .check = pm_check,
        .params = pm_params,
    };
    return xb_kv_main(argc, argv, &store);
}
