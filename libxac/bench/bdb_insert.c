/* bdb_insert: the Berkeley DB B-tree baseline (thesis chapter 5, C.6).
 *
 * Each insert is its own transaction through DB_AUTO_COMMIT, as in the
 * thesis.  Modes (--mode, result param "mode"; result param "durability"
 * is "durable" for durable and "nondurable" for the others):
 *   durable       default: the log is flushed to disk at every commit
 *   write_nosync  DB_TXN_WRITE_NOSYNC: the log is written to the OS, not
 *                 flushed
 *   nosync        DB_TXN_NOSYNC: the log stays in BDB's buffer until full
 *                 (the thesis's nondurable setting on machines 2 and 4)
 *   not_durable   DB->set_flags(DB_TXN_NOT_DURABLE): transactions and
 *                 locking as usual, but the database writes no log records
 *                 (the thesis's nondurable setting on machines 1 and 3,
 *                 where BDB 4.2 had it as an environment flag)
 *   cdb           no transactions, no log (Concurrent Data Store locking so
 *                 that --procs > 1 still works), like db_load
 * --durability durable runs durable; --durability nondurable runs
 * not_durable and then nosync, the two settings the thesis used (C.6).
 * Several processes (--procs) share one environment
 * (DB_INIT_LOCK|DB_INIT_LOG|DB_INIT_MPOOL|DB_INIT_TXN); only the parent
 * opens it with DB_RECOVER, once, before any child joins; children retry an
 * insert the deadlock detector aborted.  "log_bytes_per_insert" is how
 * far the log's end (its LSN) moved during the timed inserts, divided by
 * count; 0 in cdb mode, which has no log.
 * This file is the store; the driver, its options and the results are
 * described in common/kv_driver.h.
 */
/* xaclab-link: -ldb */
#include "kv_driver.h"
#include "tree_opts.h"
#include "workload.h"

#include <db.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "bdb_insert"
#define DB_FILE "tree.db"
#define LOAD_BATCH 1000

struct bdb {
    DB_ENV *env;
    DB *db;
    int txn;
};

static long long cache_mib = 2;

static int is_txn(const struct xb_kv_config *cfg)
{
    return strcmp(cfg->mode, "cdb") != 0;
}

static void report(const char *what, int rc)
{
    fprintf(stderr, "%s: %s: %s\n", PROG, what, db_strerror(rc));
}

static void bdb_free(struct bdb *h)
{
    if (h->db != NULL)
        h->db->close(h->db, 0);
    if (h->env != NULL)
        h->env->close(h->env, 0);
    free(h);
}

static int bdb_close(void *h)
{
    bdb_free(h);
    return 0;
}

static struct bdb *bdb_open_flags(const struct xb_kv_config *cfg,
                                  const char *dir, u_int32_t extra)
{
    struct bdb *h = calloc(1, sizeof *h);
    int rc;
    if (h == NULL)
        return NULL;
    h->txn = is_txn(cfg);
    if ((rc = db_env_create(&h->env, 0)) != 0) {
        report("db_env_create", rc);
        free(h);
        return NULL;
    }
    h->env->set_errfile(h->env, stderr);
    h->env->set_errpfx(h->env, PROG);
    u_int32_t flags = DB_CREATE | DB_INIT_MPOOL | extra;
    if (h->txn) {
        flags |= DB_INIT_LOCK | DB_INIT_LOG | DB_INIT_TXN;
        h->env->set_lk_detect(h->env, DB_LOCK_DEFAULT);
        h->env->set_flags(h->env, DB_AUTO_COMMIT, 1);
        if (strcmp(cfg->mode, "write_nosync") == 0)
            h->env->set_flags(h->env, DB_TXN_WRITE_NOSYNC, 1);
        else if (strcmp(cfg->mode, "nosync") == 0)
            h->env->set_flags(h->env, DB_TXN_NOSYNC, 1);
    } else {
        flags |= DB_INIT_CDB;
    }
    if ((rc = h->env->set_cachesize(h->env, 0,
                                    (u_int32_t)(cache_mib * 1024 * 1024), 1)) !=
            0 ||
        (rc = h->env->open(h->env, dir, flags, 0600)) != 0) {
        report("cannot open the environment", rc);
        goto fail;
    }
    if ((rc = db_create(&h->db, h->env, 0)) != 0 ||
        (strcmp(cfg->mode, "not_durable") == 0 &&
         (rc = h->db->set_flags(h->db, DB_TXN_NOT_DURABLE)) != 0) ||
        (rc = h->db->open(h->db, NULL, DB_FILE, NULL, DB_BTREE,
                          DB_CREATE | (h->txn ? DB_AUTO_COMMIT : 0), 0600)) !=
            0) {
        report("cannot open the B-tree", rc);
        goto fail;
    }
    return h;
fail:
    bdb_free(h);
    return NULL;
}

static int bdb_create(const struct xb_kv_config *cfg, const char *dir)
{
    struct bdb *h = bdb_open_flags(cfg, dir, is_txn(cfg) ? DB_RECOVER : 0);
    if (h == NULL)
        return -1;
    bdb_free(h);
    return 0;
}

static int bdb_open(const struct xb_kv_config *cfg, const char *dir,
                    enum xb_kv_use use, void **h)
{
    /* After a crash the first process to open runs recovery. */
    *h = bdb_open_flags(cfg, dir,
                        use == XB_KV_RECOVER && is_txn(cfg) ? DB_RECOVER : 0);
    return *h != NULL ? 0 : -1;
}

static void fill(DBT *d, const void *p, size_t n)
{
    memset(d, 0, sizeof *d);
    d->data = (void *)p;
    d->size = (u_int32_t)n;
}

static int bdb_insert(void *hv, const struct xb_kv_key *key,
                      const unsigned char *val, size_t vlen)
{
    struct bdb *h = hv;
    DBT k, v;
    int rc;
    fill(&k, key->bytes, sizeof key->bytes);
    fill(&v, val, vlen);
    do
        rc = h->db->put(h->db, NULL, &k, &v, 0);
    while (rc == DB_LOCK_DEADLOCK);
    if (rc != 0)
        report("put", rc);
    return rc ? -1 : 0;
}

static int bdb_load(void *hv, const uint64_t *keys, size_t n)
{
    struct bdb *h = hv;
    unsigned char kb[XB_KEY_BYTES], vb[XB_VALUE_BYTES];
    for (size_t i = 0; i < n; i += LOAD_BATCH) {
        DB_TXN *txn = NULL;
        int rc = 0;
        if (h->txn && (rc = h->env->txn_begin(h->env, NULL, &txn, 0)) != 0) {
            report("txn_begin", rc);
            return -1;
        }
        for (size_t j = i; j < n && j < i + LOAD_BATCH && rc == 0; j++) {
            DBT k, v;
            xb_key_encode(keys[j], kb);
            xb_workload_value(keys[j], vb, sizeof vb);
            fill(&k, kb, sizeof kb);
            fill(&v, vb, sizeof vb);
            rc = h->db->put(h->db, txn, &k, &v, 0);
        }
        if (rc != 0) {
            report("load put", rc);
            if (txn)
                txn->abort(txn);
            return -1;
        }
        if (txn && (rc = txn->commit(txn, 0)) != 0) {
            report("load commit", rc);
            return -1;
        }
    }
    return h->db->sync(h->db, 0) == 0 ? 0 : -1;
}

static int bdb_search(void *hv, const struct xb_kv_key *key,
                      unsigned char *val, size_t *vlen)
{
    struct bdb *h = hv;
    DBT k, v;
    int rc;
    fill(&k, key->bytes, sizeof key->bytes);
    memset(&v, 0, sizeof v);
    v.data = val;
    v.ulen = (u_int32_t)*vlen;
    v.flags = DB_DBT_USERMEM;
    do
        rc = h->db->get(h->db, NULL, &k, &v, 0);
    while (rc == DB_LOCK_DEADLOCK);
    if (rc == DB_NOTFOUND)
        return 0;
    if (rc != 0) {
        report("get", rc);
        return -1;
    }
    *vlen = v.size;
    return 1;
}

static long long bdb_scan(void *hv)
{
    struct bdb *h = hv;
    DBC *c;
    DBT k, v;
    long long n = 0;
    int rc;
    if ((rc = h->db->cursor(h->db, NULL, &c, 0)) != 0) {
        report("cursor", rc);
        return -1;
    }
    memset(&k, 0, sizeof k);
    memset(&v, 0, sizeof v);
    while ((rc = c->get(c, &k, &v, DB_NEXT)) == 0)
        n++;
    c->close(c);
    if (rc != DB_NOTFOUND) {
        report("cursor get", rc);
        return -1;
    }
    return n;
}

static double log_mark_bytes;

/* The log's current end as a byte position: log files are preallocated to
 * their full size, so their sizes say nothing; the LSN does. */
static double log_position(const struct xb_kv_config *cfg, const char *dir)
{
    if (!is_txn(cfg))
        return 0;
    struct bdb *h = bdb_open_flags(cfg, dir, 0);
    DB_LOG_STAT *st;
    double pos = 0;
    if (h == NULL)
        return 0;
    if (h->env->log_stat(h->env, &st, 0) == 0) {
        pos = (double)(st->st_cur_file - 1) * (double)st->st_lg_size +
              (double)st->st_cur_offset;
        free(st);
    }
    bdb_free(h);
    return pos;
}

static void bdb_log_mark(const struct xb_kv_config *cfg, const char *dir)
{
    log_mark_bytes = log_position(cfg, dir);
}

static double bdb_log_bytes(const struct xb_kv_config *cfg, const char *dir)
{
    return log_position(cfg, dir) - log_mark_bytes;
}

static void bdb_params(const struct xb_kv_config *cfg,
                       const struct xb_kv_counters *counters, xb_result *r)
{
    (void)cfg;
    (void)counters;
    xb_param_int(r, "cache_mib", cache_mib);
}

int main(int argc, char **argv)
{
    static const char *const modes[] = {"durable", "write_nosync", "nosync",
                                        "not_durable", "cdb", NULL};
    static const char *const durable[] = {"durable", NULL};
    static const char *const nondurable[] = {"not_durable", "nosync", NULL};
    static const struct xb_opt options[] = {
        {"cache-mib", XB_OPT_INT, &cache_mib, 1, 4095, NULL,
         "Berkeley DB cache size in MiB; the thesis used 2 (default 2)"},
        {NULL, 0, NULL, 0, 0, NULL, NULL}};
    static const struct xb_kv_store store = {
        .sut = "bdb",
        .prog = PROG,
        .synopsis = "Berkeley DB B-tree baseline: 64-bit keys, 512-byte values,"
                    "\none transaction per insert (DB_AUTO_COMMIT); see "
                    "docs/benchmarks-storage.md.",
        .modes = modes,
        .modes_help = "one Berkeley DB setting (default durable), by hand; "
                      "given with --durability, it must be of that "
                      "durability",
        .durable_modes = durable,
        .nondurable_modes = nondurable,
        .default_durability = "durable",
        .durability_help =
            "durable: the log flushed at every commit; nondurable: "
            "DB_TXN_NOT_DURABLE, then DB_TXN_NOSYNC (the thesis's two, C.6)",
        .tree_help = XB_ST_BASELINE_TREE_HELP,
        .options = options,
        .create = bdb_create,
        .open = bdb_open,
        .insert = bdb_insert,
        .load = bdb_load,
        .search = bdb_search,
        .scan = bdb_scan,
        .close = bdb_close,
        .log_mark = bdb_log_mark,
        .log_bytes = bdb_log_bytes,
        .params = bdb_params,
    };
    return xb_kv_main(argc, argv, &store);
}
