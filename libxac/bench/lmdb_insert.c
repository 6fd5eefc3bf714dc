/* lmdb_insert: the LMDB baseline for the search-tree experiments.
 *
 * Each insert is its own write transaction (mdb_txn_begin, mdb_put,
 * mdb_txn_commit).  Modes (--mode, result param "mode"; result param
 * "durability" is "durable" for durable and "nondurable" for the others):
 *   durable     default: data and meta pages are flushed at every commit
 *   nometasync  MDB_NOMETASYNC: the meta page is not flushed; the last
 *               commit may be lost on a crash, the store stays consistent
 *   nosync      MDB_NOSYNC: nothing is flushed; the OS writes when it likes
 * --durability durable runs durable, --durability nondurable runs nosync
 * (LMDB has no log to turn off: nondurable means commits not flushed).
 * LMDB is multi-process natively: every process (--procs) opens the
 * environment after fork, and writers take turns on LMDB's writer lock.
 * LMDB has no log: "log_bytes_per_insert" here is the growth of data.mdb
 * during the timed inserts, divided by count (copy-on-write pages it had
 * to add; the bytes actually written per commit are larger).
 * This file is the store; the driver, its options and the results are
 * described in common/kv_driver.h.
 */
/* xaclab-link: -llmdb */
#include "kv_driver.h"
#include "scratch.h"
#include "tree_opts.h"
#include "workload.h"

#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PROG "lmdb_insert"
#define LOAD_BATCH 10000

static long long map_mib = 4096;

struct lm {
    MDB_env *env;
    MDB_dbi dbi;
};

static void report(const char *what, int rc)
{
    fprintf(stderr, "%s: %s: %s%s\n", PROG, what, mdb_strerror(rc),
            rc == MDB_MAP_FULL ? " (raise --map-mib)" : "");
}

static int lm_close(void *hv)
{
    struct lm *h = hv;
    mdb_env_close(h->env);
    free(h);
    return 0;
}

static struct lm *lm_open_env(const struct xb_kv_config *cfg,
                              const char *dir)
{
    struct lm *h = calloc(1, sizeof *h);
    MDB_txn *txn;
    int rc;
    if (h == NULL)
        return NULL;
    unsigned flags = 0;
    if (strcmp(cfg->mode, "nometasync") == 0)
        flags = MDB_NOMETASYNC;
    else if (strcmp(cfg->mode, "nosync") == 0)
        flags = MDB_NOSYNC;
    if ((rc = mdb_env_create(&h->env)) != 0) {
        report("mdb_env_create", rc);
        free(h);
        return NULL;
    }
    if ((rc = mdb_env_set_mapsize(h->env, (size_t)map_mib << 20)) != 0 ||
        (rc = mdb_env_open(h->env, dir, flags, 0600)) != 0) {
        report("cannot open the environment", rc);
        goto fail;
    }
    if ((rc = mdb_txn_begin(h->env, NULL, 0, &txn)) != 0) {
        report("mdb_txn_begin", rc);
        goto fail;
    }
    if ((rc = mdb_dbi_open(txn, NULL, 0, &h->dbi)) != 0 ||
        (rc = mdb_txn_commit(txn)) != 0) {
        report("cannot open the database", rc);
        goto fail;
    }
    return h;
fail:
    lm_close(h);
    return NULL;
}

static int lm_open(const struct xb_kv_config *cfg, const char *dir,
                   enum xb_kv_use use, void **h)
{
    (void)use;
    *h = lm_open_env(cfg, dir);
    return *h != NULL ? 0 : -1;
}

static int lm_create(const struct xb_kv_config *cfg, const char *dir)
{
    struct lm *h = lm_open_env(cfg, dir);
    if (h == NULL)
        return -1;
    return lm_close(h);
}

static int lm_insert(void *hv, const struct xb_kv_key *key,
                     const unsigned char *val, size_t vlen)
{
    struct lm *h = hv;
    MDB_txn *txn;
    MDB_val k = {sizeof key->bytes, (void *)key->bytes},
            v = {vlen, (void *)val};
    int rc = mdb_txn_begin(h->env, NULL, 0, &txn);
    if (rc != 0) {
        report("mdb_txn_begin", rc);
        return -1;
    }
    if ((rc = mdb_put(txn, h->dbi, &k, &v, 0)) != 0) {
        mdb_txn_abort(txn);
        report("mdb_put", rc);
        return -1;
    }
    if ((rc = mdb_txn_commit(txn)) != 0) {
        report("mdb_txn_commit", rc);
        return -1;
    }
    return 0;
}

static int lm_load(void *hv, const uint64_t *keys, size_t n)
{
    struct lm *h = hv;
    unsigned char kb[XB_KEY_BYTES], vb[XB_VALUE_BYTES];
    for (size_t i = 0; i < n; i += LOAD_BATCH) {
        MDB_txn *txn;
        int rc = mdb_txn_begin(h->env, NULL, 0, &txn);
        for (size_t j = i; j < n && j < i + LOAD_BATCH && rc == 0; j++) {
            MDB_val k = {sizeof kb, kb}, v = {sizeof vb, vb};
            xb_key_encode(keys[j], kb);
            xb_workload_value(keys[j], vb, sizeof vb);
            rc = mdb_put(txn, h->dbi, &k, &v, 0);
        }
        if (rc == 0)
            rc = mdb_txn_commit(txn);
        else
            mdb_txn_abort(txn);
        if (rc != 0) {
            report("load", rc);
            return -1;
        }
    }
    return 0;
}

static int lm_search(void *hv, const struct xb_kv_key *key,
                     unsigned char *val, size_t *vlen)
{
    struct lm *h = hv;
    MDB_txn *txn;
    MDB_val k = {sizeof key->bytes, (void *)key->bytes}, v;
    int rc = mdb_txn_begin(h->env, NULL, MDB_RDONLY, &txn);
    if (rc != 0) {
        report("mdb_txn_begin", rc);
        return -1;
    }
    rc = mdb_get(txn, h->dbi, &k, &v);
    if (rc == 0) {
        size_t n = v.mv_size < *vlen ? v.mv_size : *vlen;
        memcpy(val, v.mv_data, n);
        *vlen = v.mv_size;
    }
    mdb_txn_abort(txn);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc != 0) {
        report("mdb_get", rc);
        return -1;
    }
    return 1;
}

static long long lm_scan(void *hv)
{
    struct lm *h = hv;
    MDB_txn *txn;
    MDB_cursor *c;
    MDB_val k, v;
    long long n = 0;
    int rc = mdb_txn_begin(h->env, NULL, MDB_RDONLY, &txn);
    if (rc == 0 && (rc = mdb_cursor_open(txn, h->dbi, &c)) != 0)
        mdb_txn_abort(txn);
    if (rc != 0) {
        report("cursor", rc);
        return -1;
    }
    while ((rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) == 0)
        n++;
    mdb_cursor_close(c);
    mdb_txn_abort(txn);
    if (rc != MDB_NOTFOUND) {
        report("mdb_cursor_get", rc);
        return -1;
    }
    return n;
}

static double data_mark_bytes;

static double data_file_bytes(const char *dir)
{
    char path[4096];
    struct stat st;
    if (stat(xb_path(path, sizeof path, dir, "data.mdb"), &st) != 0)
        return 0;
    return (double)st.st_size;
}

static void lm_log_mark(const struct xb_kv_config *cfg, const char *dir)
{
    (void)cfg;
    data_mark_bytes = data_file_bytes(dir);
}

static double lm_log_bytes(const struct xb_kv_config *cfg, const char *dir)
{
    (void)cfg;
    return data_file_bytes(dir) - data_mark_bytes;
}

static void lm_params(const struct xb_kv_config *cfg,
                      const struct xb_kv_counters *counters, xb_result *r)
{
    (void)cfg;
    (void)counters;
    xb_param_int(r, "map_mib", map_mib);
}

int main(int argc, char **argv)
{
    static const char *const modes[] = {"durable", "nometasync", "nosync",
                                        NULL};
    static const char *const durable[] = {"durable", NULL};
    static const char *const nondurable[] = {"nosync", NULL};
    static const struct xb_opt options[] = {
        {"map-mib", XB_OPT_INT, &map_mib, 1, 1048576, NULL,
         "LMDB map size (largest database) in MiB (default 4096)"},
        {NULL, 0, NULL, 0, 0, NULL, NULL}};
    static const struct xb_kv_store store = {
        .sut = "lmdb",
        .prog = PROG,
        .synopsis = "LMDB baseline: 64-bit keys, 512-byte values, one write "
                    "transaction per insert;\nsee docs/benchmarks-storage.md.",
        .modes = modes,
        .modes_help = "one LMDB setting (default durable), by hand; given "
                      "with --durability, it must be of that durability",
        .durable_modes = durable,
        .nondurable_modes = nondurable,
        .default_durability = "durable",
        .durability_help = "durable: data and meta pages flushed at every "
                           "commit; nondurable: MDB_NOSYNC, nothing flushed",
        .tree_help = XB_ST_BASELINE_TREE_HELP,
        .options = options,
        .create = lm_create,
        .open = lm_open,
        .insert = lm_insert,
        .load = lm_load,
        .search = lm_search,
        .scan = lm_scan,
        .close = lm_close,
        .log_mark = lm_log_mark,
        .log_bytes = lm_log_bytes,
        .params = lm_params,
    };
    return xb_kv_main(argc, argv, &store);
}
