/* rocksdb_insert: RocksDB (its C API) as a store of the search-tree
 * driver.
 *
 * Keys are the 8 big-endian bytes (xb_key_encode), so RocksDB's bytewise
 * order is the keys' order.  Every insert is one rocksdb_put, which is one
 * atomic write-ahead-log record; a search one rocksdb_get; a scan one
 * iterator over the whole database.  Modes (--mode, result param "mode"):
 *   durable  default: WriteOptions.sync, the WAL is synced at every put
 *   nosync   the WAL is written to the OS, not synced (nondurable)
 * Options otherwise RocksDB's defaults, but for a memtable twice the size
 * of the run's records (at least the default 64 MiB), so the timed phase
 * never flushes or compacts: RocksDB's background threads do not survive
 * the driver's fork (param memtable_mib).  One process at a time:
 * RocksDB locks the database directory, so --procs above 1 measures
 * nothing (says so on stderr).  "log_bytes_per_insert" is how much the WAL
 * files (*.log) grew during the timed inserts, divided by count.
 * This file is the store; the driver, its options and the results are
 * described in common/kv_driver.h.
 */
/* xaclab-link: -lrocksdb */
#include "kv_driver.h"
#include "scratch.h"
#include "tree_opts.h"
#include "workload.h"

#include <dirent.h>
#include <rocksdb/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PROG "rocksdb_insert"
#define DB_DIR "kv.rocksdb"
#define LOAD_BATCH 1000

struct rk {
    rocksdb_t *db;
    rocksdb_options_t *opts;
    rocksdb_writeoptions_t *w;
    rocksdb_readoptions_t *r;
};

/* Twice the records' bytes (key, value and about 30 bytes of memtable
 * entry), at least RocksDB's default 64 MiB. */
static size_t memtable_bytes(const struct xb_kv_config *cfg)
{
    size_t want = 2 * (size_t)cfg->count * (cfg->value_bytes + 40);
    return want > (64u << 20) ? want : (64u << 20);
}

static int failed(const char *what, char *err)
{
    if (err == NULL)
        return 0;
    fprintf(stderr, "%s: %s: %s\n", PROG, what, err);
    rocksdb_free(err);
    return -1;
}

static int rk_close(void *hv)
{
    struct rk *h = hv;
    if (h->db != NULL)
        rocksdb_close(h->db);
    if (h->w != NULL)
        rocksdb_writeoptions_destroy(h->w);
    if (h->r != NULL)
        rocksdb_readoptions_destroy(h->r);
    if (h->opts != NULL)
        rocksdb_options_destroy(h->opts);
    free(h);
    return 0;
}

static int rk_open(const struct xb_kv_config *cfg, const char *dir,
                   enum xb_kv_use use, void **out)
{
    (void)use;
    char path[4096];
    char *err = NULL;
    struct rk *h = calloc(1, sizeof *h);
    if (h == NULL)
        return -1;
    h->opts = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(h->opts, 1);
    /* A memtable that holds every record of the run: RocksDB's background
     * threads (flushes, compactions) belong to the process that first
     * opened a database, and the driver forks its timed processes from
     * the parent that made and loaded the store, so a flush scheduled in
     * a child would wait for a thread that is not there. */
    rocksdb_options_set_write_buffer_size(h->opts, memtable_bytes(cfg));
    /* The benchmark's directory is the database's: no info log beside it. */
    rocksdb_options_set_info_log_level(h->opts, 4 /* HEADER_LEVEL */);
    h->w = rocksdb_writeoptions_create();
    rocksdb_writeoptions_set_sync(h->w, strcmp(cfg->mode, "durable") == 0);
    h->r = rocksdb_readoptions_create();
    h->db = rocksdb_open(h->opts, xb_path(path, sizeof path, dir, DB_DIR),
                         &err);
    if (failed("cannot open the database", err) != 0) {
        h->db = NULL;
        rk_close(h);
        return -1;
    }
    *out = h;
    return 0;
}

static int rk_create(const struct xb_kv_config *cfg, const char *dir)
{
    void *h;
    if (rk_open(cfg, dir, XB_KV_LOAD, &h) != 0)
        return -1;
    return rk_close(h);
}

static int rk_insert(void *hv, const struct xb_kv_key *key,
                     const unsigned char *val, size_t vlen)
{
    struct rk *h = hv;
    char *err = NULL;
    rocksdb_put(h->db, h->w, (const char *)key->bytes, sizeof key->bytes,
                (const char *)val, vlen, &err);
    return failed("put", err);
}

static int rk_load(void *hv, const uint64_t *keys, size_t n)
{
    struct rk *h = hv;
    unsigned char kb[XB_KEY_BYTES], vb[XB_VALUE_BYTES];
    for (size_t i = 0; i < n; i += LOAD_BATCH) {
        rocksdb_writebatch_t *b = rocksdb_writebatch_create();
        for (size_t j = i; j < n && j < i + LOAD_BATCH; j++) {
            xb_key_encode(keys[j], kb);
            xb_workload_value(keys[j], vb, sizeof vb);
            rocksdb_writebatch_put(b, (const char *)kb, sizeof kb,
                                   (const char *)vb, sizeof vb);
        }
        char *err = NULL;
        rocksdb_write(h->db, h->w, b, &err);
        rocksdb_writebatch_destroy(b);
        if (failed("load", err) != 0)
            return -1;
    }
    return 0;
}

static int rk_search(void *hv, const struct xb_kv_key *key,
                     unsigned char *val, size_t *vlen)
{
    struct rk *h = hv;
    char *err = NULL;
    size_t n = 0;
    char *v = rocksdb_get(h->db, h->r, (const char *)key->bytes,
                          sizeof key->bytes, &n, &err);
    if (failed("get", err) != 0)
        return -1;
    if (v == NULL)
        return 0;
    memcpy(val, v, n < *vlen ? n : *vlen);
    *vlen = n;
    rocksdb_free(v);
    return 1;
}

static long long rk_scan(void *hv)
{
    struct rk *h = hv;
    long long n = 0;
    volatile char sink = 0;
    rocksdb_iterator_t *it = rocksdb_create_iterator(h->db, h->r);
    for (rocksdb_iter_seek_to_first(it); rocksdb_iter_valid(it);
         rocksdb_iter_next(it)) {
        size_t len;
        const char *v = rocksdb_iter_value(it, &len);
        sink ^= len > 0 ? v[0] : 0;
        n++;
    }
    (void)sink;
    char *err = NULL;
    rocksdb_iter_get_error(it, &err);
    rocksdb_iter_destroy(it);
    return failed("scan", err) != 0 ? -1 : n;
}

static double wal_mark_bytes;

/* The bytes of the WAL files (*.log) in the database directory. */
static double wal_bytes(const char *dir)
{
    char path[4096], file[4096];
    struct stat st;
    double sum = 0;
    DIR *d = opendir(xb_path(path, sizeof path, dir, DB_DIR));
    if (d == NULL)
        return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".log") == 0 &&
            stat(xb_path(file, sizeof file, path, e->d_name), &st) == 0)
            sum += (double)st.st_size;
    }
    closedir(d);
    return sum;
}

static void rk_log_mark(const struct xb_kv_config *cfg, const char *dir)
{
    (void)cfg;
    wal_mark_bytes = wal_bytes(dir);
}

static double rk_log_bytes(const struct xb_kv_config *cfg, const char *dir)
{
    (void)cfg;
    return wal_bytes(dir) - wal_mark_bytes;
}

static void rk_params(const struct xb_kv_config *cfg,
                      const struct xb_kv_counters *counters, xb_result *r)
{
    (void)counters;
    xb_param_str(r, "wal_sync", strcmp(cfg->mode, "durable") == 0 ? "every"
                                                                   : "none");
    xb_param_int(r, "memtable_mib", (long long)(memtable_bytes(cfg) >> 20));
}

int main(int argc, char **argv)
{
    static const char *const modes[] = {"durable", "nosync", NULL};
    static const char *const durable[] = {"durable", NULL};
    static const char *const nondurable[] = {"nosync", NULL};
    static const struct xb_kv_store store = {
        .sut = "rocksdb",
        .prog = PROG,
        .synopsis = "RocksDB: 8-byte big-endian keys, one put (one WAL "
                    "record) per insert;\nsee docs/benchmarks-systems.md.",
        .modes = modes,
        .modes_help = "one RocksDB setting (default durable), by hand; "
                      "given with --durability, it must be of that "
                      "durability",
        .durable_modes = durable,
        .nondurable_modes = nondurable,
        .default_durability = "durable",
        .durability_help = "durable: the WAL synced at every put; "
                           "nondurable: written, not synced",
        .tree_help = XB_ST_BASELINE_TREE_HELP,
        .one_process = "RocksDB lets one process open a database at a time",
        .refused = "RocksDB refused a second process on the database.",
        .create = rk_create,
        .open = rk_open,
        .insert = rk_insert,
        .load = rk_load,
        .search = rk_search,
        .scan = rk_scan,
        .close = rk_close,
        .log_mark = rk_log_mark,
        .log_bytes = rk_log_bytes,
        .params = rk_params,
    };
    return xb_kv_main(argc, argv, &store);
}
