/* crash_main.c: the options, the configurations and the results of the
 * crash-consistency suite (crash.h). */
#include "crash.h"

#include "options.h"
#include "result.h"
#include "scratch.h"
#include "tree_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPTIONS 32
#define DEFAULT_POINTS 1000
#define QUICK_POINTS 20
#define DEFAULT_INSERTS 24

static const char *const kinds[] = {"process", "power", "all", NULL};

static int append(struct xb_opt *opts, int n, const struct xb_opt *more)
{
    for (; more != NULL && more->name != NULL && n < MAX_OPTIONS - 1; more++)
        opts[n++] = *more;
    memset(&opts[n], 0, sizeof opts[n]);
    return n;
}

static int mode_is_durable(const struct xb_kv_store *st, const char *mode)
{
    for (const char *const *m = st->durable_modes; *m != NULL; m++)
        if (strcmp(*m, mode) == 0)
            return 1;
    return 0;
}

static void emit(const struct xc_run *run, const char *kind,
                 const struct xc_tally *t)
{
    const char *bench = strcmp(kind, "process") == 0 ? "process-crash"
                                                     : "power-loss";
    const char *sut = run->st->sut;
    struct {
        const char *metric, *unit;
        enum xb_better better;
        double value;
    } totals[] = {
        {"crash_points", "count", XB_HIGHER, (double)t->points},
        {"acked_commits", "count", XB_HIGHER, (double)t->acked},
        {"acked_lost", "count", XB_LOWER, (double)t->lost},
        {"uncommitted_visible", "count", XB_LOWER, (double)t->uncommitted},
        {"in_flight_visible", "count", XB_LOWER, (double)t->in_flight},
        {"invariant_violations", "count", XB_LOWER, (double)t->violations},
    };
    size_t n = sizeof totals / sizeof totals[0];
    for (size_t i = 0; i <= n; i++) {
        xb_result *r =
            i < n ? xb_result_new("crash-consistency", bench, sut,
                                  totals[i].metric, totals[i].unit,
                                  totals[i].better)
                  : xb_result_new("crash-consistency", bench, sut,
                                  "recovery_time", "ms", XB_LOWER);
        if (i < n)
            xb_sample(r, totals[i].value);
        else
            for (long long p = 0; p < t->points; p++)
                xb_sample(r, t->recovery_ms[p]);
        xb_param_str(r, "durability",
                     mode_is_durable(run->st, run->cfg->mode) ? "durable"
                                                              : "nondurable");
        xb_param_str(r, "mode", run->cfg->mode);
        xb_param_int(r, "points", run->points);
        xb_param_int(r, "seed", (long long)run->seed);
        if (strcmp(kind, "power") == 0)
            xb_param_int(r, "inserts", run->inserts);
        xb_param_int(r, "value_bytes", run->cfg->value_bytes);
        run->st->params(run->cfg, &t->counters, r);
        xb_result_emit(r);
    }
}

static int run_kind(const struct xc_run *run, const char *kind)
{
    struct xc_tally t;
    memset(&t, 0, sizeof t);
    t.recovery_ms = calloc((size_t)run->points + 1, sizeof(double));
    if (t.recovery_ms == NULL)
        xb_die_errno("calloc");
    int rc = strcmp(kind, "process") == 0 ? xc_process(run, &t)
                                          : xc_power(run, &t);
    if (rc == 0)
        emit(run, kind, &t);
    if (t.findings)
        fprintf(stderr, "%s: crash: %s %s: %lld of %lld crash points are "
                "findings (lost %lld, uncommitted visible %lld, violations "
                "%lld).\n", run->st->prog, kind, run->cfg->mode, t.findings,
                t.points, t.lost, t.uncommitted, t.violations);
    free(t.recovery_ms);
    return rc;
}

int xb_crash_main(int argc, char **argv, const struct xb_kv_store *st)
{
    long long points = -1, seed = XB_WORKLOAD_SEED, inserts = DEFAULT_INSERTS;
    long long record_config = -1, record_first = 0;
    int quick = 0, keep = 0;
    const char *kind = "all", *dir = NULL, *durability = NULL, *mode = NULL;
    const char *tree = NULL, *record_dir = NULL;
    char synopsis[512];
    snprintf(synopsis, sizeof synopsis,
             "%s crash: the crash-consistency suite on this store: process "
             "crashes (SIGKILL)\nand simulated power loss; see "
             "docs/crash-consistency.md.", st->prog);
    const struct xb_opt common[] = {
        {"kind", XB_OPT_CHOICE, &kind, 0, 0, kinds,
         "process (SIGKILL), power (simulated power loss) or all (default)"},
        {"points", XB_OPT_INT, &points, 1, 100000000, NULL,
         "crash points of each kind and configuration (default 1000, "
         "quick 20)"},
        {"seed", XB_OPT_INT, &seed, 0, INT64_MAX, NULL,
         "seed of the keys and of every random choice (default 20050520)"},
        {"inserts", XB_OPT_INT, &inserts, 1, 100000, NULL,
         "power: inserts in each recorded trace (default 24)"},
        {"durability", XB_OPT_CHOICE, &durability, 0, 0, xb_st_durabilities,
         "the modes to crash: durable (default) or nondurable"},
        {"mode", XB_OPT_CHOICE, &mode, 0, 0, st->modes, "one mode by hand"},
        {"tree", XB_OPT_CHOICE, &tree, 0, 0, xb_st_trees, st->tree_help},
        {"quick", XB_OPT_FLAG, &quick, 0, 0, NULL,
         "20 crash points of each kind: seconds"},
        {"keep", XB_OPT_FLAG, &keep, 0, 0, NULL,
         "power: keep the state of every finding beside the scratch "
         "directory"},
        {"dir", XB_OPT_STR, &dir, 0, 0, NULL,
         "directory under test (default $TMPDIR, else /tmp)"},
        {"record-config", XB_OPT_INT, &record_config, 0, XB_KV_MAX_CONFIGS,
         NULL, "internal: the recording run's configuration"},
        {"record-dir", XB_OPT_STR, &record_dir, 0, 0, NULL,
         "internal: the recording run's store directory"},
        {"record-first", XB_OPT_INT, &record_first, 0, 100000000, NULL,
         "internal: the recording run's first key index"},
        {NULL, 0, NULL, 0, 0, NULL, NULL}};
    struct xb_opt opts[MAX_OPTIONS];
    append(opts, append(opts, 0, common), st->options);
    xb_opts_parse(argc, argv, synopsis, opts);
    if (mode != NULL && durability != NULL &&
        mode_is_durable(st, mode) != (strcmp(durability, "durable") == 0)) {
        fprintf(stderr, "%s: --mode %s is not %s.\n", st->prog, mode,
                durability);
        return 2;
    }
    if (points < 0)
        points = quick ? QUICK_POINTS : DEFAULT_POINTS;

    /* Keys: enough for the process kind's stores and every trace. */
    long long traces = (points + 99) / 100;
    size_t nkeys = (size_t)(XC_ROUNDS * 64 + 256);
    if ((size_t)(traces * inserts) > nkeys)
        nkeys = (size_t)(traces * inserts);
    uint64_t *keys = malloc(nkeys * sizeof *keys);
    if (keys == NULL)
        xb_die_errno("malloc");
    xb_workload_keys(keys, nkeys, (uint64_t)seed, XB_ORDER_RANDOM);

    const char *one[] = {mode, NULL};
    const char *const *modes =
        mode != NULL ? one
        : durability != NULL && strcmp(durability, "nondurable") == 0
            ? st->nondurable_modes
            : st->durable_modes;
    struct xb_kv_request rq = {tree, modes, 1, (long long)nkeys};
    struct xb_kv_config cfgs[XB_KV_MAX_CONFIGS];
    int ncfg = st->plan ? st->plan(&rq, cfgs) : xb_kv_plan_modes(st, &rq, cfgs);
    if (ncfg <= 0) {
        free(keys);
        return ncfg == 0 ? 0 : 2;
    }
    if (record_config >= 0) { /* the power-loss recording run */
        if (record_config >= ncfg || record_dir == NULL ||
            record_first + inserts > (long long)nkeys) {
            fprintf(stderr, "%s: crash: bad --record-* options.\n", st->prog);
            return 2;
        }
        return xc_record(st, &cfgs[record_config], record_dir,
                         keys + record_first, inserts);
    }

    const char *scratch = xb_scratch_create(dir, st->prog);
    int rc = 0;
    for (int c = 0; c < ncfg && rc == 0; c++) {
        struct xc_run run = {st, &cfgs[c], scratch, points, inserts,
                             (uint64_t)seed, keys, nkeys, keep, argc - 1,
                             argv + 1, c};
        if (strcmp(kind, "power") != 0)
            rc = run_kind(&run, "process");
        if (rc == 0 && strcmp(kind, "process") != 0)
            rc = run_kind(&run, "power");
    }
    free(keys);
    return rc == 0 ? 0 : 1;
}
