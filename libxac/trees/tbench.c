/* tbench.c: see tbench.h. */
#include "tbench.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "options.h"
#include "result.h"
#include "scratch.h"
#include "tree.h"
#include "tree_opts.h"
#include "workload.h"

#define TB_MAX_PROCS 64
#define TB_MAX_SAMPLES 100000
#define TB_TOP 100
#define TB_MAX_VALUE 4096
#define TB_MAX_CONFIGS 16 /* 7 block sizes, with and without advice, + CO */

enum tb_op { TB_INSERT, TB_SEARCH, TB_SCAN };

struct tb_shared {
    uint64_t finish_ns[TB_MAX_PROCS];
    long long visited[TB_MAX_PROCS];
    char status[TB_MAX_PROCS]; /* 0 ok, 'b' XAC_EBUSY, 'f' failed */
    unsigned long long aborts[TB_MAX_PROCS]; /* during the timed phase */
    /* xStats() (shared counters) read by each child after opening and
     * after its last operation; durable insert only. */
    unsigned long long log_bytes0[TB_MAX_PROCS], log_bytes1[TB_MAX_PROCS];
    unsigned long long log_syncs0[TB_MAX_PROCS], log_syncs1[TB_MAX_PROCS];
    /* LIBXAC's page keeping, write protection and working memory
     * (xStats), as process 1 saw them: recorded with each result like a
     * baseline's cache size. */
    int keep_pages;
    int uffd;
    int pte; /* page-table access (xStats().page_table_access) */
    unsigned long long working_mib;
    double latency_us[];       /* one per key */
};

struct tb_run {
    const struct tb_program *pg;
    enum tb_op op;
    const char *opname;
    long long count, reps;
    int procs, advisory, verify;
    uint64_t seed;
    enum xb_order order;
    enum ts_kind version;
    enum ts_durability durability;
    struct tr_config cfg;
    uint64_t *keys;
    long long distinct;
    struct tb_shared *sh;
    size_t file_bytes;
    double *all_lat; /* every latency of every repetition */
    long long nlat;
    int nconfigs;    /* for progress: configurations measured in all */
};

static int tb_value_ok(const struct tb_run *run, uint64_t key,
                       const unsigned char *got)
{
    unsigned char want[TB_MAX_VALUE];
    xb_workload_value(key, want, run->cfg.value_bytes);
    return memcmp(want, got, run->cfg.value_bytes) == 0;
}

static int tb_child(const struct tb_run *run, const char *dir, int p,
                    int ready_fd, int go_fd)
{
    struct ts_store s;
    tr_tree *t = NULL;
    char c = 'r';
    struct ts_config tc = {run->version, run->durability, run->advisory};
    struct xac_stats st;
    memset(&st, 0, sizeof st);
    int rc = ts_open_config(&s, &tc, dir, "tree.db", run->file_bytes);
    if (rc == XAC_EBUSY)
        c = 'b';
    else if (rc != 0 || tr_open(&s, &t) != 0) {
        fprintf(stderr, "%s: process %d cannot open the tree: %s\n",
                run->pg->prog, p + 1, tr_strerror(rc));
        c = 'f';
    }
    if (c == 'r' && ts_stats(&s, &st) != 0) {
        fprintf(stderr, "%s: process %d: xStats failed.\n", run->pg->prog,
                p + 1);
        c = 'f';
    }
    run->sh->log_bytes0[p] = st.log_bytes;
    run->sh->log_syncs0[p] = st.log_syncs;
    if (p == 0) {
        run->sh->keep_pages = st.keep_pages;
        run->sh->uffd = st.uffd;
        run->sh->pte = st.page_table_access;
        run->sh->working_mib = st.working_mib;
    }
    if (write(ready_fd, &c, 1) != 1 || c != 'r')
        return c == 'b' ? 0 : 1;
    while (read(go_fd, &c, 1) < 0 && errno == EINTR)
        ;
    size_t begin, end;
    xb_workload_slice((size_t)run->count, p, run->procs, &begin, &end);
    unsigned char v[TB_MAX_VALUE];
    int failed = 0;
    unsigned long long aborts0 = s.ts_aborts;
    for (size_t i = begin; i < end && run->op != TB_SCAN && !failed; i++) {
        uint64_t key = run->keys[i], t0, t1;
        if (run->op == TB_INSERT) {
            xb_workload_value(key, v, run->cfg.value_bytes);
            t0 = xb_now_ns();
            rc = tr_insert(t, key, v);
            t1 = xb_now_ns();
            if (rc < 0) {
                fprintf(stderr, "%s: insert failed: %s\n", run->pg->prog,
                        tr_strerror(rc));
                failed = 1;
            }
        } else {
            t0 = xb_now_ns();
            rc = tr_search(t, key, v);
            t1 = xb_now_ns();
            if (rc != 1 || !tb_value_ok(run, key, v)) {
                fprintf(stderr, "%s: search for key %016llx %s.\n",
                        run->pg->prog, (unsigned long long)key,
                        rc == 1 ? "returned a wrong value" : "found nothing");
                failed = 1;
            }
        }
        run->sh->latency_us[i] = (double)(t1 - t0) / 1e3;
    }
    if (run->op == TB_SCAN)
        run->sh->visited[p] = tr_range(t, 0, UINT64_MAX, NULL, NULL);
    run->sh->finish_ns[p] = xb_now_ns();
    run->sh->aborts[p] = s.ts_aborts - aborts0;
    if (ts_stats(&s, &st) != 0)
        failed = 1;
    run->sh->log_bytes1[p] = st.log_bytes;
    run->sh->log_syncs1[p] = st.log_syncs;
    tr_close(t);
    if (ts_close(&s) != 0)
        failed = 1;
    return failed;
}

/* Fork the children and time them: elapsed ns, 0 on failure, or -1 if
 * LIBXAC refused a second process. */
static int64_t tb_children(const struct tb_run *run, const char *dir)
{
    int ready[2], go[2], busy = 0, ok = 1;
    pid_t pids[TB_MAX_PROCS];
    if (pipe(ready) != 0 || pipe(go) != 0)
        xb_die_errno("pipe");
    fflush(NULL);
    for (int p = 0; p < run->procs; p++) {
        pids[p] = fork();
        if (pids[p] < 0)
            xb_die_errno("fork");
        if (pids[p] == 0) {
            close(ready[0]);
            close(go[1]);
            _exit(tb_child(run, dir, p, ready[1], go[0]));
        }
    }
    close(ready[1]);
    close(go[0]);
    for (int p = 0; p < run->procs; p++) {
        char c = 'f';
        if (read(ready[0], &c, 1) != 1 || c == 'f')
            ok = 0;
        busy += c == 'b';
    }
    close(ready[0]);
    uint64_t start = xb_now_ns();
    close(go[1]);
    for (int p = 0; p < run->procs; p++) {
        int st;
        while (waitpid(pids[p], &st, 0) < 0)
            if (errno != EINTR)
                xb_die_errno("waitpid");
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "%s: process %d of %d failed.\n", run->pg->prog,
                    p + 1, run->procs);
            ok = 0;
        }
    }
    if (busy)
        return -1;
    if (!ok)
        return 0;
    uint64_t end = start;
    for (int p = 0; p < run->procs; p++)
        if (run->sh->finish_ns[p] > end)
            end = run->sh->finish_ns[p];
    return end > start ? (int64_t)(end - start) : 1;
}

/* Create the tree; for search and scan, load the keys through the serial
 * version (same file format, no transaction overhead). */
static int tb_prepare(const struct tb_run *run, const char *dir)
{
    struct ts_store s;
    tr_tree *t;
    int rc = ts_open(&s, TS_SERIAL, dir, "tree.db", run->file_bytes, 0);
    if (rc == 0 && (rc = tr_create(&s, &run->cfg)) == 0 &&
        (rc = tr_open(&s, &t)) == 0) {
        unsigned char v[TB_MAX_VALUE];
        for (long long i = 0; run->op != TB_INSERT && i < run->count && !rc;
             i++) {
            xb_workload_value(run->keys[i], v, run->cfg.value_bytes);
            rc = tr_insert(t, run->keys[i], v) < 0;
        }
        tr_close(t);
    }
    if (ts_close(&s) != 0 && rc == 0)
        rc = -1;
    if (rc != 0)
        fprintf(stderr, "%s: cannot create the tree: %s\n", run->pg->prog,
                tr_strerror(rc));
    return rc;
}

static int tb_verify(const struct tb_run *run, const char *dir,
                     uint64_t *used)
{
    struct ts_store s;
    tr_tree *t;
    char why[512];
    long long bad = 0;
    unsigned char v[TB_MAX_VALUE];
    if (ts_open(&s, TS_SERIAL, dir, "tree.db", run->file_bytes, 0) != 0 ||
        tr_open(&s, &t) != 0)
        return -1;
    *used = tr_bytes_used(t);
    for (long long i = 0; run->verify && i < run->count; i++)
        if (tr_search(t, run->keys[i], v) != 1 ||
            !tb_value_ok(run, run->keys[i], v))
            if (bad++ < 5)
                fprintf(stderr, "%s: verify: key %016llx is missing or "
                        "wrong.\n", run->pg->prog,
                        (unsigned long long)run->keys[i]);
    if (run->verify) {
        long long n = tr_range(t, 0, UINT64_MAX, NULL, NULL);
        if (n != run->distinct) {
            fprintf(stderr, "%s: verify: the tree holds %lld keys, not "
                    "%lld.\n", run->pg->prog, n, run->distinct);
            bad++;
        }
        if (tr_check(t, why, sizeof why) != 0) {
            fprintf(stderr, "%s: verify: %s\n", run->pg->prog, why);
            bad++;
        }
    }
    tr_close(t);
    ts_close(&s);
    return bad ? -1 : 0;
}

static int tb_cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

static void tb_params(const struct tb_run *run, xb_result *r)
{
    xb_param_int(r, "count", run->count);
    xb_param_int(r, "procs", run->procs);
    const char *durability =
        run->durability == TS_DURABLE ? "durable" : "nondurable";
    xb_param_str(r, "durability", durability);
    xb_param_str(r, "mode", durability);
    xb_param_str(r, "order", xb_order_name(run->order));
    xb_param_int(r, "seed", (long long)run->seed);
    xb_param_int(r, "key_bytes", XB_KEY_BYTES);
    xb_param_int(r, "value_bytes", run->cfg.value_bytes);
    xb_param_str(r, "tree", tr_kind_name(run->cfg.kind));
    xb_param_int(r, "block_bytes",
                 run->cfg.kind == TR_BTREE ? run->cfg.block_bytes : 0);
    xb_param_bool(r, "advisory", run->advisory);
    xb_param_str(r, "version",
                 run->version == TS_XAC ? "transactional" : "serial");
    if (run->version == TS_XAC) {
        xb_param_bool(r, "keep_pages", run->sh->keep_pages);
        xb_param_str(r, "write_protect",
                     run->sh->uffd ? "uffd" : "mprotect");
        xb_param_str(r, "access_control", run->sh->pte ? "pte" : "mprotect");
        xb_param_int(r, "working_mib", (long long)run->sh->working_mib);
    }
}

static void tb_emit(const struct tb_run *run, xb_result *r)
{
    if (xb_sample_count(r) == 0) {
        xb_result_free(r);
        return;
    }
    tb_params(run, r);
    xb_result_emit(r);
}

/* Measure one tree configuration; 0, 1 (failed) or 2 (unsupported). */
static int tb_config(struct tb_run *run, const char *scratch, int index)
{
    const char *prog = run->pg->prog;
    char metric[64], topm[64];
    snprintf(metric, sizeof metric, "%s_latency", run->opname);
    snprintf(topm, sizeof topm, "%s_latency_top", run->opname);
    xb_result *thr = xb_result_new("search-tree", run->opname, "libxac",
                                   "throughput", "ops/s", XB_HIGHER);
    xb_result *lat = xb_result_new("search-tree", run->opname, "libxac",
                                   metric, "us", XB_LOWER);
    xb_result *top = xb_result_new("search-tree", run->opname, "libxac",
                                   topm, "us", XB_LOWER);
    xb_result *bpk = xb_result_new("search-tree", run->opname, "libxac",
                                   "bytes_per_key", "bytes", XB_LOWER);
    xb_result *logb = xb_result_new("search-tree", run->opname, "libxac",
                                    "log_bytes_per_insert", "bytes",
                                    XB_LOWER);
    xb_result *logs = xb_result_new("search-tree", run->opname, "libxac",
                                    "log_syncs_per_insert", "ratio",
                                    XB_LOWER);
    xb_result *aborts = xb_result_new("search-tree", run->opname, "libxac",
                                      "aborts", "count", XB_LOWER);
    size_t shsize = sizeof(struct tb_shared) +
                    (size_t)run->count * sizeof(double);
    run->file_bytes = tr_file_bytes(&run->cfg, (uint64_t)run->count);
    run->nlat = 0;
    for (long long r = 0; r < run->reps; r++) {
        char repdir[4096], name[64];
        snprintf(name, sizeof name, "cfg-%d-rep-%lld", index, r);
        xb_path(repdir, sizeof repdir, scratch, name);
        if (mkdir(repdir, 0700) != 0)
            xb_die_errno("mkdir");
        if (tb_prepare(run, repdir) != 0)
            return 1;
        (void)xb_settle(repdir); /* noise only: a failure changes nothing */
        memset(run->sh, 0, shsize);
        int64_t ns = tb_children(run, repdir);
        if (ns < 0) {
            fprintf(stderr, "%s: this LIBXAC refuses a second live process "
                    "(XAC_EBUSY), so --procs must be 1 until multi-process "
                    "transactions are supported.\n", prog);
            return 2;
        }
        if (ns == 0)
            return 1;
        double secs = (double)ns / 1e9, rate;
        if (run->op == TB_SCAN) {
            long long visited = 0;
            for (int p = 0; p < run->procs; p++) {
                if (run->sh->visited[p] != run->distinct) {
                    fprintf(stderr, "%s: scan visited %lld keys, not %lld.\n",
                            prog, run->sh->visited[p], run->distinct);
                    return 1;
                }
                visited += run->sh->visited[p];
            }
            rate = (double)visited / secs;
        } else {
            rate = (double)run->count / secs;
            memcpy(run->all_lat + run->nlat, run->sh->latency_us,
                   (size_t)run->count * sizeof(double));
            run->nlat += run->count;
        }
        xb_sample(thr, rate);
        for (int p = 0; p < run->procs && run->version == TS_XAC; p++)
            xb_sample(aborts, (double)run->sh->aborts[p]);
        uint64_t used = 0;
        if (tb_verify(run, repdir, &used) != 0)
            return 1;
        if (run->op == TB_INSERT)
            xb_sample(bpk, (double)used / (double)run->count);
        if (run->op == TB_INSERT && run->durability == TS_DURABLE) {
            /* The counters are shared by all processes on the directory:
             * every child opened before any inserted, so the delta from the
             * smallest opening value to the largest final one covers
             * exactly the measured inserts. */
            unsigned long long b0 = UINT64_MAX, b1 = 0, s0 = UINT64_MAX,
                               s1 = 0;
            for (int p = 0; p < run->procs; p++) {
                if (run->sh->log_bytes0[p] < b0)
                    b0 = run->sh->log_bytes0[p];
                if (run->sh->log_bytes1[p] > b1)
                    b1 = run->sh->log_bytes1[p];
                if (run->sh->log_syncs0[p] < s0)
                    s0 = run->sh->log_syncs0[p];
                if (run->sh->log_syncs1[p] > s1)
                    s1 = run->sh->log_syncs1[p];
            }
            xb_sample(logb, (double)(b1 - b0) / (double)run->count);
            xb_sample(logs, (double)(s1 - s0) / (double)run->count);
        }
        xb_remove_tree(repdir);
        xb_progress((double)(index * run->reps + r + 1) /
                        (double)(run->nconfigs * run->reps),
                    "%s%s %u: %s repetition %lld of %lld, %.0f ops/s",
                    tr_kind_name(run->cfg.kind),
                    run->advisory ? " advisory" : "", run->cfg.block_bytes,
                    run->opname, r + 1, run->reps, rate);
    }
    if (run->nlat > 0) {
        long long n = run->nlat;
        long long take = n < TB_MAX_SAMPLES ? n : TB_MAX_SAMPLES;
        for (long long j = 0; j < take; j++)
            xb_sample(lat, run->all_lat[j * n / take]);
        qsort(run->all_lat, (size_t)n, sizeof(double), tb_cmp_desc);
        for (long long j = 0; j < n && j < TB_TOP; j++)
            xb_sample(top, run->all_lat[j]);
    }
    tb_emit(run, thr);
    tb_emit(run, lat);
    tb_emit(run, top);
    tb_emit(run, bpk);
    tb_emit(run, logb);
    tb_emit(run, logs);
    tb_emit(run, aborts);
    return 0;
}

static int tb_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static long long tb_distinct(const uint64_t *keys, long long n)
{
    uint64_t *c = malloc((size_t)n * sizeof *c);
    if (c == NULL)
        xb_die_errno("malloc");
    memcpy(c, keys, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, tb_cmp_u64);
    long long d = n > 0;
    for (long long i = 1; i < n; i++)
        d += c[i] != c[i - 1];
    free(c);
    return d;
}

int tb_main(int argc, char **argv, const struct tb_program *pg)
{
    static const char *const ops[] = {"insert", "search", "scan", NULL};
    static const char *const orders[] = {"random", "sorted", NULL};
    static const char *const versions[] = {"transactional", "serial", NULL};
    long long count = -1, reps = -1, procs = 1, seed = XB_WORKLOAD_SEED;
    long long block = -1, vbytes = XB_VALUE_BYTES;
    int quick = 0, verify = 0, no_verify = 0, advisory = 0;
    const char *dir = NULL, *mode = NULL, *durability = NULL;
    const char *order = "random", *op = pg->default_op, *tree = NULL;
    const char *version = NULL;
    const struct xb_opt opts[] = {
        {"quick", XB_OPT_FLAG, &quick, 0, 0, NULL,
         "2,000 keys, 2 repetitions, verify: under 15 s"},
        {"op", XB_OPT_CHOICE, &op, 0, 0, ops, "what to time"},
        {"count", XB_OPT_INT, &count, 1, 100000000, NULL,
         "keys in all (default 100000; quick 2000)"},
        {"procs", XB_OPT_INT, &procs, 1, TB_MAX_PROCS, NULL,
         "processes sharing the tree, each with count/procs keys "
         "(transactional version)"},
        {"durability", XB_OPT_CHOICE, &durability, 0, 0, xb_st_durabilities,
         "durable: every operation one DURABLE LIBXAC transaction "
         "(xInit(dir, DURABLE): redo log, recovery); nondurable (default): "
         "xInit(dir, NONDURABLE)"},
        {"mode", XB_OPT_CHOICE, &mode, 0, 0, xb_st_durabilities,
         "this program's spelling of --durability (both given must agree)"},
        {"order", XB_OPT_CHOICE, &order, 0, 0, orders,
         "key order (default random)"},
        {"seed", XB_OPT_INT, &seed, 0, INT64_MAX, NULL,
         "workload seed (default 20050520)"},
        {"reps", XB_OPT_INT, &reps, 1, 1000, NULL,
         "repetitions, each on a fresh tree (default 3; quick 2)"},
        {"tree", XB_OPT_CHOICE, &tree, 0, 0, xb_st_trees,
         pg->sweep
             ? "btree: every block size; btree-advisory: the same with "
               "advisory calls (transactional); cobtree; all (default): "
               "every block size, then the CO B-tree (transactional: the "
               "advisory block sizes too)"
             : "btree (default), btree-advisory (the B+-tree calling "
               "setPageAccess), cobtree, or all three in turn"},
        {"block-bytes", XB_OPT_INT, &block, 4096, 262144, NULL,
         pg->sweep ? "only this B+-tree block size (power of two)"
                   : "B+-tree node size, a power of two (default 4096)"},
        {"advisory", XB_OPT_FLAG, &advisory, 0, 0, NULL,
         "the same as --tree btree-advisory"},
        {"value-bytes", XB_OPT_INT, &vbytes, 1, TB_MAX_VALUE, NULL,
         "value size (default 512, as the baselines)"},
        {"version", XB_OPT_CHOICE, &version, 0, 0, versions,
         pg->sweep ? "transactional (LIBXAC) or serial (plain mmap, one "
                     "process; the default)"
                   : "transactional (LIBXAC; the default) or serial (plain "
                     "mmap, one process)"},
        {"dir", XB_OPT_STR, &dir, 0, 0, NULL,
         "directory under test (default $TMPDIR, else /tmp)"},
        {"verify", XB_OPT_FLAG, &verify, 0, 0, NULL,
         "check every key and the invariants afterwards (default in quick "
         "mode)"},
        {"no-verify", XB_OPT_FLAG, &no_verify, 0, 0, NULL,
         "do not check (default in full mode)"},
        {NULL, 0, NULL, 0, 0, NULL, NULL}};
    xb_opts_parse(argc, argv, pg->synopsis, opts);

    struct tb_run run;
    memset(&run, 0, sizeof run);
    run.pg = pg;
    if (verify && no_verify) {
        fprintf(stderr, "%s: --verify and --no-verify exclude each other.\n",
                pg->prog);
        return 2;
    }
    if (block >= 0 && (block & (block - 1)) != 0) {
        fprintf(stderr, "%s: --block-bytes must be a power of two.\n",
                pg->prog);
        return 2;
    }
    if (mode != NULL && durability != NULL && strcmp(mode, durability) != 0) {
        fprintf(stderr, "%s: --mode %s and --durability %s disagree.\n",
                pg->prog, mode, durability);
        return 2;
    }
    const char *dur = mode != NULL ? mode : durability;
    run.durability = dur != NULL && strcmp(dur, "durable") == 0
                         ? TS_DURABLE
                         : TS_NONDURABLE;
    const char *sel = tree != NULL ? tree : pg->sweep ? "all" : "btree";
    if (advisory) {
        if (tree != NULL && strcmp(tree, "btree") != 0 &&
            strcmp(tree, "btree-advisory") != 0) {
            fprintf(stderr, "%s: --advisory only applies to --tree btree.\n",
                    pg->prog);
            return 2;
        }
        sel = "btree-advisory";
    }
    const char *ver = version != NULL ? version : pg->default_version;
    run.version = strcmp(ver, "serial") == 0 ? TS_SERIAL : TS_XAC;
    run.count = count >= 0 ? count : quick ? 2000 : 100000;
    run.reps = reps >= 0 ? reps : quick ? 2 : 3;
    run.verify = verify || (quick && !no_verify);
    run.procs = (int)procs;
    run.seed = (uint64_t)seed;
    run.order = (enum xb_order)xb_order_parse(order);
    run.opname = op;
    run.op = strcmp(op, "insert") == 0   ? TB_INSERT
             : strcmp(op, "search") == 0 ? TB_SEARCH
                                         : TB_SCAN;
    run.cfg.value_bytes = (uint32_t)vbytes;
    if (run.count < procs) {
        fprintf(stderr, "%s: --count must be at least --procs.\n", pg->prog);
        return 2;
    }

    /* The configurations to measure: B+-trees, advised B+-trees, CO. */
    int want_bt = strcmp(sel, "btree") == 0 || strcmp(sel, "all") == 0;
    int want_adv = strcmp(sel, "btree-advisory") == 0 ||
                   (strcmp(sel, "all") == 0 && run.version == TS_XAC);
    int want_co = strcmp(sel, "cobtree") == 0 || strcmp(sel, "all") == 0;
    struct tr_config cfgs[TB_MAX_CONFIGS];
    int advs[TB_MAX_CONFIGS], ncfg = 0;
    for (int a = 0; a < 2; a++) {
        for (uint32_t b = 4096; (a ? want_adv : want_bt) && b <= 262144;
             b *= 2) {
            if (block >= 0 ? b != (uint32_t)block : !pg->sweep && b != 4096)
                continue;
            if (run.cfg.value_bytes + 8 > (b - 16) / 2) {
                fprintf(stderr, "%s: a %u-byte block holds fewer than two "
                        "%u-byte values.\n", pg->prog, b,
                        run.cfg.value_bytes);
                return 2;
            }
            advs[ncfg] = a;
            cfgs[ncfg++] = (struct tr_config){TR_BTREE, b,
                                              run.cfg.value_bytes};
        }
    }
    if (want_co) {
        advs[ncfg] = 0;
        cfgs[ncfg++] = (struct tr_config){TR_COBTREE, 0, run.cfg.value_bytes};
    }

    /* What only the transactional version has.  A program that measures
     * the serial trees by default (tree_blocks) is told these by the
     * suite-wide options of a run meant for the others: it says so and
     * measures nothing.  Asked for the serial version, it is an error. */
    const char *needs = run.durability == TS_DURABLE ? "--durability durable"
                        : procs > 1                  ? "--procs above 1"
                        : want_adv                   ? "--tree btree-advisory"
                                                     : NULL;
    if (run.version == TS_SERIAL && needs != NULL) {
        if (version != NULL) {
            fprintf(stderr, "%s: %s needs --version transactional (the "
                    "serial version is one process without log or advisory "
                    "calls).\n", pg->prog, needs);
            return 2;
        }
        fprintf(stderr, "%s: %s needs the transactional version, and this "
                "program measures the serial trees unless --version "
                "transactional is given, so it measures nothing here.\n",
                pg->prog, needs);
        return 0;
    }

    const char *scratch = xb_scratch_create(dir, pg->prog);
    run.keys = malloc((size_t)run.count * sizeof *run.keys);
    run.all_lat = malloc((size_t)(run.count * run.reps) * sizeof(double));
    if (run.keys == NULL || run.all_lat == NULL)
        xb_die_errno("malloc");
    xb_workload_keys(run.keys, (size_t)run.count, run.seed, run.order);
    run.distinct = tb_distinct(run.keys, run.count);
    size_t shsize = sizeof(struct tb_shared) +
                    (size_t)run.count * sizeof(double);
    run.sh = mmap(NULL, shsize, PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (run.sh == MAP_FAILED)
        xb_die_errno("mmap");
    run.nconfigs = ncfg;
    int rc = 0;
    for (int c = 0; c < ncfg && rc == 0; c++) {
        run.cfg = cfgs[c];
        run.advisory = advs[c];
        rc = tb_config(&run, scratch, c);
    }
    if (rc == 1)
        fprintf(stderr, "%s: %s failed; no further results.\n", pg->prog, op);
    munmap(run.sh, shsize);
    free(run.keys);
    free(run.all_lat);
    return rc;
}
