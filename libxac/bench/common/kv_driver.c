/* kv_driver.c: see kv_driver.h. */
#include "kv_driver.h"

#include "clock.h"
#include "options.h"
#include "result.h"
#include "scratch.h"
#include "tree_opts.h"
#include "workload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_PROCS 64
#define MAX_LATENCY_SAMPLES 100000

enum op { OP_INSERT, OP_SEARCH, OP_SCAN };
static const char *const op_names[] = {"insert", "search", "scan", NULL};

struct shared {
    uint64_t finish_ns[MAX_PROCS];
    long long visited[MAX_PROCS];
    double latency_us[]; /* one per key */
};

struct run {
    const struct xb_kv_store *store;
    struct xb_kv_config cfg;
    enum op op;
    long long count, reps;
    uint64_t seed;
    enum xb_order order;
    int verify;
    uint64_t *keys;
    long long distinct;
    struct shared *sh;
};

static int check_value(uint64_t key, const unsigned char *got, size_t len)
{
    unsigned char want[XB_VALUE_BYTES];
    xb_workload_value(key, want, sizeof want);
    return len == sizeof want && memcmp(want, got, len) == 0;
}

/* The body of child p; returns its exit status. */
static int child(const struct run *run, const char *dir, int p, int ready_fd,
                 int go_fd)
{
    const struct xb_kv_store *st = run->store;
    void *h = st->open(&run->cfg, dir);
    char c = h ? 'r' : 'f';
    if (write(ready_fd, &c, 1) != 1 || h == NULL)
        return 1;
    while (read(go_fd, &c, 1) < 0 && errno == EINTR)
        ;
    size_t begin, end;
    xb_workload_slice((size_t)run->count, p, run->cfg.procs, &begin, &end);
    unsigned char k[XB_KEY_BYTES], v[XB_VALUE_BYTES];
    int failed = 0;
    for (size_t i = begin; i < end && run->op != OP_SCAN && !failed; i++) {
        xb_key_encode(run->keys[i], k);
        uint64_t t0, t1;
        if (run->op == OP_INSERT) {
            xb_workload_value(run->keys[i], v, sizeof v);
            t0 = xb_now_ns();
            failed = st->insert(h, k, sizeof k, v, sizeof v) != 0;
            t1 = xb_now_ns();
        } else {
            size_t len = sizeof v;
            t0 = xb_now_ns();
            int found = st->search(h, k, sizeof k, v, &len);
            t1 = xb_now_ns();
            if (found != 1 || !check_value(run->keys[i], v, len)) {
                fprintf(stderr, "%s: search for key %016llx %s.\n", st->prog,
                        (unsigned long long)run->keys[i],
                        found == 1   ? "returned a wrong value"
                        : found == 0 ? "found nothing"
                                     : "failed");
                failed = 1;
            }
        }
        run->sh->latency_us[i] = (double)(t1 - t0) / 1e3;
    }
    if (run->op == OP_SCAN) {
        run->sh->visited[p] = st->scan(h);
        failed = run->sh->visited[p] < 0;
    }
    run->sh->finish_ns[p] = xb_now_ns();
    st->close(h);
    return failed;
}

static int verify_store(const struct run *run, const char *dir)
{
    const struct xb_kv_store *st = run->store;
    void *h = st->open(&run->cfg, dir);
    if (h == NULL)
        return -1;
    long long bad = 0;
    unsigned char k[XB_KEY_BYTES], v[XB_VALUE_BYTES];
    for (long long i = 0; i < run->count; i++) {
        size_t len = sizeof v;
        xb_key_encode(run->keys[i], k);
        int found = st->search(h, k, sizeof k, v, &len);
        if (found != 1 || !check_value(run->keys[i], v, len)) {
            if (bad++ < 5)
                fprintf(stderr, "%s: verify: key %016llx %s.\n", st->prog,
                        (unsigned long long)run->keys[i],
                        found == 1 ? "has a wrong value" : "is missing");
        }
    }
    long long n = st->scan(h);
    if (n != run->distinct) {
        fprintf(stderr, "%s: verify: the store holds %lld records, not %lld.\n",
                st->prog, n, run->distinct);
        bad++;
    }
    st->close(h);
    if (bad != 0)
        fprintf(stderr, "%s: verify: %lld of %lld checks failed.\n", st->prog,
                bad, run->count + 1);
    return bad ? -1 : 0;
}

/* Fork the children, time them; returns elapsed ns or 0 on failure. */
static uint64_t run_children(const struct run *run, const char *dir)
{
    int ready[2], go[2];
    pid_t pids[MAX_PROCS];
    if (pipe(ready) != 0 || pipe(go) != 0)
        xb_die_errno("pipe");
    fflush(NULL);
    for (int p = 0; p < run->cfg.procs; p++) {
        pids[p] = fork();
        if (pids[p] < 0)
            xb_die_errno("fork");
        if (pids[p] == 0) {
            close(ready[0]);
            close(go[1]);
            _exit(child(run, dir, p, ready[1], go[0]));
        }
    }
    close(ready[1]);
    close(go[0]);
    int ok = 1;
    for (int p = 0; p < run->cfg.procs; p++) {
        char c = 'f';
        if (read(ready[0], &c, 1) != 1 || c != 'r')
            ok = 0;
    }
    close(ready[0]);
    uint64_t start = xb_now_ns();
    close(go[1]); /* end-of-file on go releases every child at once */
    for (int p = 0; p < run->cfg.procs; p++) {
        int status;
        while (waitpid(pids[p], &status, 0) < 0)
            if (errno != EINTR)
                xb_die_errno("waitpid");
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "%s: process %d of %d failed.\n", run->store->prog,
                    p + 1, run->cfg.procs);
            ok = 0;
        }
    }
    if (!ok)
        return 0;
    uint64_t end = start;
    for (int p = 0; p < run->cfg.procs; p++)
        if (run->sh->finish_ns[p] > end)
            end = run->sh->finish_ns[p];
    return end > start ? end - start : 1;
}

static void add_latencies(const struct run *run, xb_result *lat)
{
    long long quota = MAX_LATENCY_SAMPLES / run->reps;
    if (quota < 1)
        quota = 1;
    if (run->count <= quota) {
        for (long long i = 0; i < run->count; i++)
            xb_sample(lat, run->sh->latency_us[i]);
        return;
    }
    for (long long j = 0; j < quota; j++)
        xb_sample(lat, run->sh->latency_us[j * run->count / quota]);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static long long count_distinct(const uint64_t *keys, long long n)
{
    uint64_t *c = malloc((size_t)n * sizeof *c);
    if (c == NULL)
        xb_die_errno("malloc");
    memcpy(c, keys, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, cmp_u64);
    long long d = n > 0;
    for (long long i = 1; i < n; i++)
        d += c[i] != c[i - 1];
    free(c);
    return d;
}

static const char *durability_of(const struct xb_kv_store *st,
                                 const char *mode)
{
    for (const char *const *m = st->durable_modes; *m != NULL; m++)
        if (strcmp(*m, mode) == 0)
            return "durable";
    return "nondurable";
}

static void add_params(const struct run *run, xb_result *r)
{
    xb_param_int(r, "count", run->count);
    xb_param_int(r, "procs", run->cfg.procs);
    xb_param_str(r, "durability", durability_of(run->store, run->cfg.mode));
    xb_param_str(r, "mode", run->cfg.mode);
    xb_param_str(r, "order", xb_order_name(run->order));
    xb_param_int(r, "seed", (long long)run->seed);
    xb_param_int(r, "key_bytes", XB_KEY_BYTES);
    xb_param_int(r, "value_bytes", XB_VALUE_BYTES);
    xb_param_int(r, run->store->knob_param, run->cfg.knob);
}

/* Every repetition of run->cfg.mode, then its results; 0 or 1 (failed).
 * index/nmodes place its repetitions in the program's progress. */
static int measure(struct run *run, const char *scratch, int index,
                   int nmodes, size_t shsize)
{
    const struct xb_kv_store *st = run->store;
    const char *op = op_names[run->op];
    xb_result *thr = xb_result_new("search-tree", op, st->sut, "throughput",
                                   "ops/s", XB_HIGHER);
    char metric[64];
    snprintf(metric, sizeof metric, "%s_latency", op);
    xb_result *lat = xb_result_new("search-tree", op, st->sut, metric, "us",
                                   XB_LOWER);
    xb_result *logb = xb_result_new("search-tree", op, st->sut,
                                    "log_bytes_per_insert", "bytes", XB_LOWER);
    xb_result *rs[] = {thr, lat, logb};
    int failed = 0;
    for (long long r = 0; r < run->reps && !failed; r++) {
        char repdir[4096], name[64];
        snprintf(name, sizeof name, "%s-rep-%lld", run->cfg.mode, r);
        xb_path(repdir, sizeof repdir, scratch, name);
        if (mkdir(repdir, 0700) != 0)
            xb_die_errno("mkdir");
        if (st->create(&run->cfg, repdir) != 0) {
            failed = 1;
            break;
        }
        if (run->op != OP_INSERT) {
            void *h = st->open(&run->cfg, repdir);
            int loaded =
                h != NULL && st->load(h, run->keys, (size_t)run->count) == 0;
            if (h != NULL)
                st->close(h);
            if (!loaded) {
                failed = 1;
                break;
            }
        }
        if (st->log_mark)
            st->log_mark(&run->cfg, repdir);
        (void)xb_settle(repdir); /* noise only: a failure changes nothing */
        memset(run->sh, 0, shsize);
        uint64_t ns = run_children(run, repdir);
        if (ns == 0) {
            failed = 1;
            break;
        }
        double secs = (double)ns / 1e9, rate;
        if (run->op == OP_SCAN) {
            long long visited = 0;
            for (int p = 0; p < run->cfg.procs; p++) {
                if (run->sh->visited[p] != run->distinct) {
                    fprintf(stderr, "%s: scan visited %lld records, not %lld.\n",
                            st->prog, run->sh->visited[p], run->distinct);
                    failed = 1;
                }
                visited += run->sh->visited[p];
            }
            rate = (double)visited / secs;
        } else {
            rate = (double)run->count / secs;
            add_latencies(run, lat);
        }
        xb_sample(thr, rate);
        if (run->op == OP_INSERT) {
            xb_sample(logb,
                      st->log_bytes(&run->cfg, repdir) / (double)run->count);
            if (run->verify && verify_store(run, repdir) != 0)
                failed = 1;
        }
        xb_remove_tree(repdir);
        if (!failed)
            xb_progress((double)(index * run->reps + r + 1) /
                            (double)(nmodes * run->reps),
                        "%s %s: %s repetition %lld of %lld, %.0f ops/s",
                        st->sut, run->cfg.mode, op, r + 1, run->reps, rate);
    }
    for (int k = 0; k < 3; k++) {
        if (failed || xb_sample_count(rs[k]) == 0) {
            xb_result_free(rs[k]);
            continue;
        }
        add_params(run, rs[k]);
        xb_result_emit(rs[k]);
    }
    return failed;
}

int xb_kv_main(int argc, char **argv, const struct xb_kv_store *st)
{
    static const char *const orders[] = {"random", "sorted", NULL};
    struct run run;
    memset(&run, 0, sizeof run);
    run.store = st;
    long long count = -1, reps = -1, procs = 1, seed = XB_WORKLOAD_SEED;
    long long knob = st->knob_default;
    int quick = 0, verify = 0, no_verify = 0;
    const char *dir = NULL, *mode = NULL, *durability = NULL;
    const char *order = "random", *tree = NULL, *op = "insert";
    char knob_help[256], mode_help[256];
    snprintf(knob_help, sizeof knob_help, "%s (default %lld)", st->knob_help,
             st->knob_default);
    snprintf(mode_help, sizeof mode_help,
             "%s, by hand; given with --durability, it must be of that "
             "durability", st->modes_help);
    const struct xb_opt opts[] = {
        {"quick", XB_OPT_FLAG, &quick, 0, 0, NULL,
         "2,000 keys, 2 repetitions, verify: under 15 s"},
        {"op", XB_OPT_CHOICE, &op, 0, 0, op_names,
         "what to time (default insert)"},
        {"count", XB_OPT_INT, &count, 1, 100000000, NULL,
         "keys in all (default 100000; quick 2000)"},
        {"procs", XB_OPT_INT, &procs, 1, MAX_PROCS, NULL,
         "processes sharing the store, each with count/procs keys"},
        {"durability", XB_OPT_CHOICE, &durability, 0, 0, xb_st_durabilities,
         st->durability_help},
        {"mode", XB_OPT_CHOICE, &mode, 0, 0, st->modes, mode_help},
        {"tree", XB_OPT_CHOICE, &tree, 0, 0, xb_st_trees,
         XB_ST_BASELINE_TREE_HELP},
        {"order", XB_OPT_CHOICE, &order, 0, 0, orders,
         "key order (default random)"},
        {"seed", XB_OPT_INT, &seed, 0, INT64_MAX, NULL,
         "workload seed (default 20050520)"},
        {"reps", XB_OPT_INT, &reps, 1, 1000, NULL,
         "repetitions, each on a fresh store (default 3; quick 2)"},
        {st->knob_name, XB_OPT_INT, &knob, st->knob_min, st->knob_max, NULL,
         knob_help},
        {"dir", XB_OPT_STR, &dir, 0, 0, NULL,
         "directory under test (default $TMPDIR, else /tmp)"},
        {"verify", XB_OPT_FLAG, &verify, 0, 0, NULL,
         "check every key afterwards (default in quick mode)"},
        {"no-verify", XB_OPT_FLAG, &no_verify, 0, 0, NULL,
         "do not check (default in full mode)"},
        {NULL, 0, NULL, 0, 0, NULL, NULL}};
    xb_opts_parse(argc, argv, st->synopsis, opts);
    if (verify && no_verify) {
        fprintf(stderr, "%s: --verify and --no-verify exclude each other.\n",
                st->prog);
        return 2;
    }
    if (mode != NULL && durability != NULL &&
        strcmp(durability_of(st, mode), durability) != 0) {
        fprintf(stderr, "%s: --mode %s is not %s.\n", st->prog, mode,
                durability);
        return 2;
    }
    const char *one_mode[] = {mode, NULL};
    const char *const *modes =
        mode != NULL ? one_mode
        : durability != NULL && strcmp(durability, "nondurable") == 0
            ? st->nondurable_modes
            : st->durable_modes;
    run.count = count >= 0 ? count : quick ? 2000 : 100000;
    run.reps = reps >= 0 ? reps : quick ? 2 : 3;
    run.verify = verify || (quick && !no_verify);
    run.seed = (uint64_t)seed;
    run.order = (enum xb_order)xb_order_parse(order);
    run.cfg.knob = knob;
    run.cfg.procs = (int)procs;
    run.op = strcmp(op, "insert") == 0   ? OP_INSERT
             : strcmp(op, "search") == 0 ? OP_SEARCH
                                         : OP_SCAN;
    if (run.count < procs) {
        fprintf(stderr, "%s: --count must be at least --procs.\n", st->prog);
        return 2;
    }
    if (xb_st_baseline_skips(st->prog, tree))
        return 0;

    const char *scratch = xb_scratch_create(dir, st->prog);
    run.keys = malloc((size_t)run.count * sizeof *run.keys);
    if (run.keys == NULL)
        xb_die_errno("malloc");
    xb_workload_keys(run.keys, (size_t)run.count, run.seed, run.order);
    run.distinct = count_distinct(run.keys, run.count);
    size_t shsize = sizeof(struct shared) + (size_t)run.count * sizeof(double);
    run.sh = mmap(NULL, shsize, PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (run.sh == MAP_FAILED)
        xb_die_errno("mmap");

    int nmodes = 0, failed = 0;
    while (modes[nmodes] != NULL)
        nmodes++;
    for (int m = 0; m < nmodes && !failed; m++) {
        run.cfg.mode = modes[m];
        failed = measure(&run, scratch, m, nmodes, shsize);
    }
    if (failed)
        fprintf(stderr, "%s: %s (%s) failed; no results for it.\n", st->prog,
                op, run.cfg.mode);
    munmap(run.sh, shsize);
    free(run.keys);
    return failed;
}
