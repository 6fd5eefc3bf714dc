/* kv_driver.c: see kv_driver.h.  The options and the plan; kv_measure.c
 * measures each configuration. */
#include "kv_driver.h"

#include "kv_measure.h"
#include "procs.h"
#include "scratch.h"
#include "tree_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPTIONS 32
/* --quick searches: each process searches its keys this many times. */
#define QUICK_SEARCH_PASSES 20
/* Operations a run keeps a latency for (count * passes), as --count's
 * own limit. */
#define MAX_OPERATIONS 100000000

static const char *const op_names[] = {"insert", "search", "scan", "mixed",
                                       NULL};

/* Without a plan of the store's own: each selected mode is one
 * configuration, and a single LIBXAC tree selects none (tree_opts.h). */
int xb_kv_plan_modes(const struct xb_kv_store *st,
                     const struct xb_kv_request *rq, struct xb_kv_config *cfgs)
{
    int n = 0;
    if (xb_st_baseline_skips(st->prog, rq->tree))
        return 0;
    if (st->one_process != NULL && rq->procs > 1) {
        fprintf(stderr, "%s: %s; --procs %d measures nothing.\n", st->prog,
                st->one_process, rq->procs);
        return 0;
    }
    for (const char *const *m = rq->modes; *m != NULL; m++)
        cfgs[n++] = (struct xb_kv_config){*m, rq->procs, rq->count,
                                          XB_VALUE_BYTES, NULL};
    if (n == 0)
        fprintf(stderr, "%s: %s has no mode of the durability asked for; "
                "it measures nothing.\n", st->prog, st->sut);
    return n;
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

/* Append the table more (may be NULL) to opts[0..n) and end it; the new
 * n.  A store with too many options is a programming error. */
static int append_options(struct xb_opt *opts, int n, const struct xb_opt *more)
{
    for (; more != NULL && more->name != NULL; more++) {
        if (n == MAX_OPTIONS - 1) {
            fprintf(stderr, "kv_driver: more than %d options.\n",
                    MAX_OPTIONS - 1);
            abort();
        }
        opts[n++] = *more;
    }
    memset(&opts[n], 0, sizeof opts[n]);
    return n;
}

/* Measure every configuration in turn; 0, 1 or 2 (kv_measure.h). */
static int measure_all(struct xb_kv_run *run, const struct xb_kv_config *cfgs,
                       int n, const char *dir)
{
    const char *scratch = xb_scratch_create(dir, run->store->prog);
    long long nkeys = xb_kv_keys(run);
    run->keys = malloc((size_t)nkeys * sizeof *run->keys);
    if (run->keys == NULL)
        xb_die_errno("malloc");
    xb_workload_keys(run->keys, (size_t)nkeys, run->seed, run->order);
    run->distinct = count_distinct(run->keys, nkeys);
    if (run->store->latency_top && run->op != XB_KV_MIXED) {
        run->all_latency = malloc(
            (size_t)(run->count * run->passes * run->reps) * sizeof(double));
        if (run->all_latency == NULL)
            xb_die_errno("malloc");
    }
    run->sh_bytes = sizeof(struct xb_kv_shared) +
                    (size_t)(nkeys * run->passes) * sizeof(double);
    run->sh = xb_shared_new(run->sh_bytes);
    run->nconfigs = n;
    int rc = 0, c;
    for (c = 0; c < n && rc == 0; c++)
        rc = xb_kv_measure(run, &cfgs[c], scratch, c);
    if (rc == 1) {
        char label[128];
        xb_kv_label(run->store, &cfgs[c - 1], label, sizeof label);
        fprintf(stderr, "%s: %s (%s) failed; no further results.\n",
                run->store->prog, run->op_name, label);
    }
    xb_shared_free(run->sh, run->sh_bytes);
    free(run->keys);
    free(run->all_latency);
    return rc;
}

int xb_kv_main(int argc, char **argv, const struct xb_kv_store *st)
{
    if (argc > 1 && strcmp(argv[1], "crash") == 0)
        return xb_crash_main(argc - 1, argv + 1, st);
    static const char *const orders[] = {"random", "sorted", NULL};
    long long count = -1, reps = -1, procs = 1, seed = XB_WORKLOAD_SEED;
    long long passes = -1, readers = -1;
    int quick = 0, verify = 0, no_verify = 0;
    const char *dir = NULL, *mode = NULL, *durability = NULL, *tree = NULL;
    const char *order = "random";
    const char *op = st->default_op != NULL ? st->default_op : "insert";
    char op_help[64];
    snprintf(op_help, sizeof op_help, "what to time (default %s)", op);
    const struct xb_opt common[] = {
        {"quick", XB_OPT_FLAG, &quick, 0, 0, NULL,
         "2,000 keys, 2 repetitions, verify: under 15 s"},
        {"op", XB_OPT_CHOICE, &op, 0, 0, op_names, op_help},
        {"count", XB_OPT_INT, &count, 1, 100000000, NULL,
         "keys in all (default 100000; quick 2000)"},
        {"procs", XB_OPT_INT, &procs, 1, XB_PROCS_MAX, NULL,
         "processes sharing the store, each with count/procs keys"},
        {"durability", XB_OPT_CHOICE, &durability, 0, 0, xb_st_durabilities,
         st->durability_help},
        {"mode", XB_OPT_CHOICE, &mode, 0, 0, st->modes, st->modes_help},
        {"tree", XB_OPT_CHOICE, &tree, 0, 0, xb_st_trees, st->tree_help},
        {"order", XB_OPT_CHOICE, &order, 0, 0, orders,
         "key order (default random)"},
        {"seed", XB_OPT_INT, &seed, 0, INT64_MAX, NULL,
         "workload seed (default 20050520)"},
        {"reps", XB_OPT_INT, &reps, 1, 1000, NULL,
         "repetitions, each on a fresh store (default 3; quick 2)"},
        {"passes", XB_OPT_INT, &passes, 1, 1000, NULL,
         "--op search: times each process searches all its keys (default "
         "1; quick 20: 2,000 searches take about a millisecond, too short "
         "to measure)"},
        {"readers", XB_OPT_INT, &readers, 0, XB_PROCS_MAX - 1, NULL,
         "--op mixed: of the --procs processes, how many search the loaded "
         "keys while the others insert count new ones (default half; 0: "
         "the same inserts with nobody searching, the writers' baseline)"},
        {NULL, 0, NULL, 0, 0, NULL, NULL}};
    const struct xb_opt last[] = {
        {"dir", XB_OPT_STR, &dir, 0, 0, NULL,
         "directory under test (default $TMPDIR, else /tmp)"},
        {"verify", XB_OPT_FLAG, &verify, 0, 0, NULL,
         "check every key, and the store's invariants where it has them, "
         "afterwards (default in quick mode)"},
        {"no-verify", XB_OPT_FLAG, &no_verify, 0, 0, NULL,
         "do not check (default in full mode)"},
        {NULL, 0, NULL, 0, 0, NULL, NULL}};
    /* The driver's options, the store's own, then the driver's last. */
    struct xb_opt opts[MAX_OPTIONS];
    int n = append_options(opts, 0, common);
    n = append_options(opts, n, st->options);
    append_options(opts, n, last);
    xb_opts_parse(argc, argv, st->synopsis, opts);

    if (verify && no_verify) {
        fprintf(stderr, "%s: --verify and --no-verify exclude each other.\n",
                st->prog);
        return 2;
    }
    if (mode != NULL && durability != NULL &&
        strcmp(xb_kv_durability_of(st, mode), durability) != 0) {
        fprintf(stderr, "%s: --mode %s is not %s.\n", st->prog, mode,
                durability);
        return 2;
    }
    if (durability == NULL)
        durability = st->default_durability;
    const char *one_mode[] = {mode, NULL};
    struct xb_kv_run run;
    memset(&run, 0, sizeof run);
    run.store = st;
    run.count = count >= 0 ? count : quick ? 2000 : 100000;
    run.reps = reps >= 0 ? reps : quick ? 2 : 3;
    run.passes = passes >= 0 ? passes : 1;
    run.verify = verify || (quick && !no_verify);
    run.seed = (uint64_t)seed;
    run.order = (enum xb_order)xb_order_parse(order);
    run.op_name = op;
    run.op = strcmp(op, "insert") == 0   ? XB_KV_INSERT
             : strcmp(op, "search") == 0 ? XB_KV_SEARCH
             : strcmp(op, "scan") == 0   ? XB_KV_SCAN
                                         : XB_KV_MIXED;
    if (run.op != XB_KV_MIXED && readers >= 0) {
        fprintf(stderr, "%s: --readers applies to --op mixed; %s measures "
                "nothing.\n", st->prog, op);
        return 0;
    }
    run.readers = readers >= 0 ? (int)readers : (int)procs / 2;
    if (run.op == XB_KV_MIXED && run.readers >= procs) {
        fprintf(stderr, "%s: --readers %d leaves no process to insert; it "
                "must be below --procs (%lld).\n", st->prog, run.readers,
                procs);
        return 2;
    }
    if (run.op != XB_KV_SEARCH && run.passes > 1) {
        /* As every suite-wide option that does not apply: the agent
         * passes it to every program of the suite. */
        fprintf(stderr, "%s: --passes applies to --op search; %s measures "
                "nothing.\n", st->prog, op);
        return 0;
    }
    if (run.op == XB_KV_SEARCH && passes < 0 && quick)
        run.passes = QUICK_SEARCH_PASSES;
    if (xb_kv_keys(&run) * run.passes > MAX_OPERATIONS) {
        fprintf(stderr, "%s: --count times --passes (twice --count for --op "
                "mixed) is over %d operations, the most that are kept.\n",
                st->prog, MAX_OPERATIONS);
        return 2;
    }
    if (run.count < procs) {
        fprintf(stderr, "%s: --count must be at least --procs.\n", st->prog);
        return 2;
    }
    struct xb_kv_request rq = {
        tree,
        mode != NULL                         ? one_mode
        : strcmp(durability, "durable") == 0 ? st->durable_modes
                                             : st->nondurable_modes,
        (int)procs, run.count};
    struct xb_kv_config cfgs[XB_KV_MAX_CONFIGS];
    int ncfg = st->plan ? st->plan(&rq, cfgs) : xb_kv_plan_modes(st, &rq, cfgs);
    if (ncfg <= 0)
        return ncfg == 0 ? 0 : 2;
    return measure_all(&run, cfgs, ncfg, dir);
}
