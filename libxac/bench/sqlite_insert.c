/* sqlite_insert: SQLite as a store of the search-tree driver.
 *
 * One table, rowid-free, keyed by the 64-bit key:
 *   CREATE TABLE kv(k INTEGER PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID
 * SQLite's integers are signed, so the key is stored with its top bit
 * flipped (k = key ^ 2^63): signed order is then the keys' unsigned order.
 * Every insert is one autocommit statement (INSERT OR REPLACE), so one
 * transaction; a search one autocommit SELECT; a scan one SELECT over the
 * whole table, reading every value.  The database runs in WAL mode with
 * mmap_size covering the whole file (--mmap-mib, default: enough for
 * count records twice over), so reads come from the mapping and writes go
 * to the WAL through write().  Modes (--mode, result param "mode"):
 *   wal_full    default, durable: synchronous=FULL, the WAL is synced at
 *               every commit
 *   wal_normal  synchronous=NORMAL: synced at checkpoints only; a commit
 *               survives a process crash, not a power cut (nondurable)
 *   wal_off     synchronous=OFF: nothing synced (nondurable)
 * --durability durable runs wal_full, --durability nondurable wal_off.
 * Several processes (--procs) open the database each; SQLite lets one of
 * them write at a time and the others wait (busy_timeout 60 s).
 * This file is the store; the driver, its options and the results are
 * described in common/kv_driver.h.
 */
/* xaclab-link: -lsqlite3 */
#include "kv_driver.h"
#include "scratch.h"
#include "tree_opts.h"
#include "workload.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PROG "sqlite_insert"
#define DB_FILE "kv.sqlite"
#define LOAD_BATCH 1000
#define BUSY_MS 60000

static long long mmap_mib = 0; /* 0: from --count */

struct sq {
    sqlite3 *db;
    sqlite3_stmt *put, *get, *all;
    long long mmap_bytes; /* what SQLite granted */
};

static void report(sqlite3 *db, const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", PROG, what,
            db != NULL ? sqlite3_errmsg(db) : "out of memory");
}

static sqlite3_int64 key_column(uint64_t key)
{
    return (sqlite3_int64)(key ^ (1ULL << 63));
}

static long long mmap_bytes_for(const struct xb_kv_config *cfg)
{
    if (mmap_mib > 0)
        return mmap_mib << 20;
    /* A record is the value, the key and about 20 bytes of cell header;
     * pages are about 2/3 full after random inserts: twice that, plus
     * 64 MiB, covers the file with room. */
    long long per = (long long)cfg->value_bytes + 32;
    return 2 * cfg->count * per + (64LL << 20);
}

static int sq_close(void *hv)
{
    struct sq *h = hv;
    sqlite3_finalize(h->put);
    sqlite3_finalize(h->get);
    sqlite3_finalize(h->all);
    int rc = sqlite3_close(h->db);
    if (rc != SQLITE_OK)
        report(h->db, "sqlite3_close");
    free(h);
    return rc == SQLITE_OK ? 0 : -1;
}

static int exec(struct sq *h, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(h->db, sql, NULL, NULL, &err) == SQLITE_OK)
        return 0;
    fprintf(stderr, "%s: %s: %s\n", PROG, sql, err ? err : "failed");
    sqlite3_free(err);
    return -1;
}

static int prepare(struct sq *h, const char *sql, sqlite3_stmt **st)
{
    if (sqlite3_prepare_v2(h->db, sql, -1, st, NULL) == SQLITE_OK)
        return 0;
    report(h->db, sql);
    return -1;
}

static const char *synchronous_of(const char *mode)
{
    return strcmp(mode, "wal_full") == 0     ? "FULL"
           : strcmp(mode, "wal_normal") == 0 ? "NORMAL"
                                             : "OFF";
}

static int sq_open(const struct xb_kv_config *cfg, const char *dir,
                   enum xb_kv_use use, void **out)
{
    (void)use;
    char path[4096], sql[128];
    struct sq *h = calloc(1, sizeof *h);
    if (h == NULL)
        return -1;
    xb_path(path, sizeof path, dir, DB_FILE);
    if (sqlite3_open_v2(path, &h->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                            SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        report(h->db, "cannot open the database");
        sqlite3_close(h->db);
        free(h);
        return -1;
    }
    sqlite3_busy_timeout(h->db, BUSY_MS);
    snprintf(sql, sizeof sql, "PRAGMA synchronous=%s",
             synchronous_of(cfg->mode));
    if (exec(h, "PRAGMA journal_mode=WAL") != 0 || exec(h, sql) != 0)
        goto fail;
    snprintf(sql, sizeof sql, "PRAGMA mmap_size=%lld", mmap_bytes_for(cfg));
    sqlite3_stmt *mm = NULL;
    if (prepare(h, sql, &mm) != 0)
        goto fail;
    if (sqlite3_step(mm) == SQLITE_ROW)
        h->mmap_bytes = sqlite3_column_int64(mm, 0);
    sqlite3_finalize(mm);
    if (exec(h, "CREATE TABLE IF NOT EXISTS kv(k INTEGER PRIMARY KEY, "
                "v BLOB NOT NULL) WITHOUT ROWID") != 0 ||
        prepare(h, "INSERT OR REPLACE INTO kv(k, v) VALUES(?1, ?2)",
                &h->put) != 0 ||
        prepare(h, "SELECT v FROM kv WHERE k = ?1", &h->get) != 0 ||
        prepare(h, "SELECT k, v FROM kv", &h->all) != 0)
        goto fail;
    *out = h;
    return 0;
fail:
    sq_close(h);
    return -1;
}

static int sq_create(const struct xb_kv_config *cfg, const char *dir)
{
    void *h;
    if (sq_open(cfg, dir, XB_KV_LOAD, &h) != 0)
        return -1;
    return sq_close(h);
}

static int put(struct sq *h, uint64_t key, const unsigned char *val,
               size_t vlen)
{
    sqlite3_bind_int64(h->put, 1, key_column(key));
    sqlite3_bind_blob(h->put, 2, val, (int)vlen, SQLITE_STATIC);
    int rc = sqlite3_step(h->put);
    sqlite3_reset(h->put);
    if (rc == SQLITE_DONE)
        return 0;
    report(h->db, "insert");
    return -1;
}

static int sq_insert(void *hv, const struct xb_kv_key *key,
                     const unsigned char *val, size_t vlen)
{
    return put(hv, key->n, val, vlen);
}

static int sq_load(void *hv, const uint64_t *keys, size_t n)
{
    struct sq *h = hv;
    unsigned char vb[XB_VALUE_BYTES];
    for (size_t i = 0; i < n; i += LOAD_BATCH) {
        if (exec(h, "BEGIN") != 0)
            return -1;
        for (size_t j = i; j < n && j < i + LOAD_BATCH; j++) {
            xb_workload_value(keys[j], vb, sizeof vb);
            if (put(h, keys[j], vb, sizeof vb) != 0) {
                (void)exec(h, "ROLLBACK");
                return -1;
            }
        }
        if (exec(h, "COMMIT") != 0)
            return -1;
    }
    return 0;
}

static int sq_search(void *hv, const struct xb_kv_key *key,
                     unsigned char *val, size_t *vlen)
{
    struct sq *h = hv;
    sqlite3_bind_int64(h->get, 1, key_column(key->n));
    int rc = sqlite3_step(h->get), found = 0;
    if (rc == SQLITE_ROW) {
        size_t n = (size_t)sqlite3_column_bytes(h->get, 0);
        const void *v = sqlite3_column_blob(h->get, 0);
        memcpy(val, v, n < *vlen ? n : *vlen);
        *vlen = n;
        found = 1;
    } else if (rc != SQLITE_DONE) {
        report(h->db, "search");
        found = -1;
    }
    sqlite3_reset(h->get);
    return found;
}

static long long sq_scan(void *hv)
{
    struct sq *h = hv;
    long long n = 0;
    int rc;
    while ((rc = sqlite3_step(h->all)) == SQLITE_ROW) {
        /* Fetch the value, as the other stores' scans hand it over. */
        (void)sqlite3_column_blob(h->all, 1);
        n++;
    }
    sqlite3_reset(h->all);
    if (rc != SQLITE_DONE) {
        report(h->db, "scan");
        return -1;
    }
    return n;
}

static int sq_check(void *hv, char *why, size_t len)
{
    struct sq *h = hv;
    sqlite3_stmt *st;
    if (prepare(h, "PRAGMA integrity_check", &st) != 0) {
        snprintf(why, len, "PRAGMA integrity_check could not run");
        return -1;
    }
    int rc = sqlite3_step(st), bad = 0;
    if (rc != SQLITE_ROW ||
        strcmp((const char *)sqlite3_column_text(st, 0), "ok") != 0) {
        snprintf(why, len, "integrity_check: %s",
                 rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0)
                                  : sqlite3_errmsg(h->db));
        bad = 1;
    }
    sqlite3_finalize(st);
    return bad ? -1 : 0;
}

static int sq_observe(void *hv, struct xb_kv_counters *c)
{
    struct sq *h = hv;
    memset(c, 0, sizeof *c);
    c->own[0] = h->mmap_bytes;
    return 0;
}

static uint64_t sq_bytes_used(void *hv)
{
    struct sq *h = hv;
    sqlite3_stmt *st;
    uint64_t pages = 0, size = 0;
    if (prepare(h, "PRAGMA page_count", &st) == 0) {
        if (sqlite3_step(st) == SQLITE_ROW)
            pages = (uint64_t)sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    if (prepare(h, "PRAGMA page_size", &st) == 0) {
        if (sqlite3_step(st) == SQLITE_ROW)
            size = (uint64_t)sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    return pages * size;
}

static void sq_params(const struct xb_kv_config *cfg,
                      const struct xb_kv_counters *counters, xb_result *r)
{
    /* What SQLite granted (it caps mmap_size at its compile-time limit). */
    xb_param_int(r, "mmap_mib", counters->own[0] >> 20);
    xb_param_str(r, "synchronous", synchronous_of(cfg->mode));
}

int main(int argc, char **argv)
{
    static const char *const modes[] = {"wal_full", "wal_normal", "wal_off",
                                        NULL};
    static const char *const durable[] = {"wal_full", NULL};
    static const char *const nondurable[] = {"wal_off", NULL};
    static const struct xb_opt options[] = {
        {"mmap-mib", XB_OPT_INT, &mmap_mib, 1, 1048576, NULL,
         "PRAGMA mmap_size in MiB (default: twice the records' bytes plus "
         "64 MiB, so the mapping covers the database)"},
        {NULL, 0, NULL, 0, 0, NULL, NULL}};
    static const struct xb_kv_store store = {
        .sut = "sqlite",
        .prog = PROG,
        .synopsis = "SQLite: a WITHOUT ROWID table keyed by the 64-bit key, "
                    "WAL, mmap_size over the database,\none transaction per "
                    "operation; see docs/benchmarks-systems.md.",
        .modes = modes,
        .modes_help = "one SQLite setting (default wal_full), by hand; "
                      "given with --durability, it must be of that "
                      "durability",
        .durable_modes = durable,
        .nondurable_modes = nondurable,
        .default_durability = "durable",
        .durability_help = "durable: synchronous=FULL, the WAL synced at "
                           "every commit; nondurable: synchronous=OFF",
        .tree_help = XB_ST_BASELINE_TREE_HELP,
        .options = options,
        .create = sq_create,
        .open = sq_open,
        .insert = sq_insert,
        .load = sq_load,
        .search = sq_search,
        .scan = sq_scan,
        .close = sq_close,
        .observe = sq_observe,
        .bytes_used = sq_bytes_used,
        .check = sq_check,
        .params = sq_params,
    };
    return xb_kv_main(argc, argv, &store);
}
