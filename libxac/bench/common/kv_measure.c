/* kv_measure.c: see kv_measure.h. */
#include "kv_measure.h"

#include "clock.h"
#include "result.h"
#include "scratch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#define MAX_LATENCY_SAMPLES 100000
#define TOP_LATENCIES 100
#define PROC_REFUSED 'b'
#define PROC_FAILED 'f'

/* The results of one configuration, in the order they are printed (the
 * run page shows them in that order: a mixed run's two rates first). */
enum { R_THROUGHPUT, R_INSERT_RATE, R_SEARCH_RATE, R_LATENCY,
       R_SEARCH_LATENCY, R_TOP, R_BYTES, R_LOG_BYTES, R_LOG_SYNCS,
       R_ABORTS, R_RETRIES, R_RETRY_MAX, R_ABORTED_TIME, R_WAIT_TIME,
       R_ESCALATIONS, R_FAULTS, R_COPIES, R_NEW_PAGES, R_WRITE_BYTES,
       R_SEARCH_FAULTS, R_CONFLICTS,
       NRESULTS = R_CONFLICTS + XB_KV_PAGE_KINDS };

#define TMPFS_MAGIC_NUMBER 0x01021994

/* Bytes the reaped children caused to be written to storage so far: the
 * kernel's I/O accounting (write_bytes, pages dirtied through write() or a
 * mapping), which getrusage reports in 512-byte blocks. */
static double children_write_bytes(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_CHILDREN, &ru) == 0 ? (double)ru.ru_oublock * 512
                                                : 0;
}

/* tmpfs writes nothing to storage: no write_bytes_per_insert there. */
static int on_storage(const char *dir)
{
    struct statfs fs;
    return statfs(dir, &fs) == 0 && fs.f_type != TMPFS_MAGIC_NUMBER;
}

struct child_arg {
    const struct xb_kv_run *run;
    const struct xb_kv_config *cfg;
    const char *dir;
};

static int value_ok(uint64_t key, const unsigned char *got, size_t len,
                    uint32_t value_bytes)
{
    unsigned char want[XB_KV_MAX_VALUE];
    xb_workload_value(key, want, value_bytes);
    return len == value_bytes && memcmp(want, got, len) == 0;
}

static const char *search_failure(int found)
{
    return found == 1   ? "returned a wrong value"
           : found == 0 ? "found nothing"
                        : "failed";
}

/* Of a mixed run's processes, the last run->readers search. */
static int writers_of(const struct xb_kv_run *run,
                      const struct xb_kv_config *cfg)
{
    return run->op == XB_KV_MIXED ? cfg->procs - run->readers : cfg->procs;
}

/* One timed insert of key k of the run into slot; 0, or -1 (said on
 * stderr by the store). */
static int insert_one(const struct xb_kv_run *run,
                      const struct xb_kv_config *cfg, void *h, size_t k,
                      size_t slot)
{
    unsigned char v[XB_KV_MAX_VALUE];
    struct xb_kv_key key = {.n = run->keys[k]};
    xb_key_encode(key.n, key.bytes);
    xb_workload_value(key.n, v, cfg->value_bytes);
    uint64_t t0 = xb_now_ns();
    int rc = run->store->insert(h, &key, v, cfg->value_bytes);
    run->sh->latency_us[slot] = (double)(xb_now_ns() - t0) / 1e3;
    return rc != 0 ? -1 : 0;
}

/* One timed search for key k of the run into slot, its value checked; 0
 * or -1 (said on stderr). */
static int search_one(const struct xb_kv_run *run,
                      const struct xb_kv_config *cfg, void *h, size_t k,
                      size_t slot)
{
    const struct xb_kv_store *st = run->store;
    unsigned char v[XB_KV_MAX_VALUE];
    struct xb_kv_key key = {.n = run->keys[k]};
    size_t len = cfg->value_bytes;
    xb_key_encode(key.n, key.bytes);
    uint64_t t0 = xb_now_ns();
    int found = st->search(h, &key, v, &len);
    run->sh->latency_us[slot] = (double)(xb_now_ns() - t0) / 1e3;
    if (found != 1 || !value_ok(key.n, v, len, cfg->value_bytes)) {
        fprintf(stderr, "%s: search for key %016llx %s.\n", st->prog,
                (unsigned long long)key.n, search_failure(found));
        return -1;
    }
    return 0;
}

/* --op insert and search: process p's slice of the keys, --passes times;
 * the latency of pass q's operation on key i goes to slot q * count + i.
 * 0 or -1. */
static int own_slice(const struct xb_kv_run *run,
                     const struct xb_kv_config *cfg, void *h, int p,
                     struct xb_kv_proc_share *me)
{
    size_t begin, end;
    xb_workload_slice((size_t)run->count, p, cfg->procs, &begin, &end);
    size_t per = end - begin, nops = per * (size_t)run->passes;
    for (size_t o = 0; o < nops; o++) {
        size_t i = begin + o % per;
        size_t slot = (o / per) * (size_t)run->count + i;
        int rc = run->op == XB_KV_INSERT ? insert_one(run, cfg, h, i, slot)
                                         : search_one(run, cfg, h, i, slot);
        if (rc != 0)
            return -1;
    }
    me->searches = run->op == XB_KV_SEARCH ? (long long)nops : 0;
    return 0;
}

/* --op mixed, a writer: its slice of the second count keys, then one
 * writer fewer.  0 or -1; a writer that fails still counts itself out, so
 * the readers stop. */
static int mixed_writer(const struct xb_kv_run *run,
                        const struct xb_kv_config *cfg, void *h, int w)
{
    size_t begin, end, n = (size_t)run->count;
    xb_workload_slice(n, w, writers_of(run, cfg), &begin, &end);
    int rc = 0;
    for (size_t i = begin; i < end && rc == 0; i++)
        rc = insert_one(run, cfg, h, n + i, i);
    __atomic_sub_fetch(&run->sh->writers_left, 1, __ATOMIC_SEQ_CST);
    return rc;
}

/* --op mixed, a reader: its slice of the loaded keys, round and round,
 * until no writer is left (at least one search); its latest searches'
 * latencies stay in its slots.  0 or -1. */
static int mixed_reader(const struct xb_kv_run *run,
                        const struct xb_kv_config *cfg, void *h, int r,
                        struct xb_kv_proc_share *me)
{
    size_t begin, end, n = (size_t)run->count;
    xb_workload_slice(n, r, run->readers, &begin, &end);
    size_t per = end - begin;
    long long o = 0;
    do {
        size_t i = begin + (size_t)o % per;
        if (search_one(run, cfg, h, i, n + i) != 0)
            return -1;
        o++;
    } while (__atomic_load_n(&run->sh->writers_left, __ATOMIC_ACQUIRE) > 0);
    me->searches = o;
    return 0;
}

/* The timed operations of process p; returns its exit status. */
static int child(const struct xb_proc *self, int p, void *argp)
{
    const struct child_arg *a = argp;
    const struct xb_kv_run *run = a->run;
    const struct xb_kv_store *st = run->store;
    const struct xb_kv_config *cfg = a->cfg;
    struct xb_kv_proc_share *me = &run->sh->proc[p];
    void *h = NULL;
    int rc = st->open(cfg, a->dir, XB_KV_MEASURE, &h);
    char status = rc == 0               ? XB_PROC_READY
                  : rc == XB_KV_REFUSED ? PROC_REFUSED
                                        : PROC_FAILED;
    if (rc == 0 && st->observe && st->observe(h, &me->at_open) != 0)
        status = PROC_FAILED;
    if (!xb_proc_ready(self, status)) {
        if (rc == 0)
            st->close(h);
        return status == PROC_FAILED;
    }
    int writers = writers_of(run, cfg), failed;
    if (run->op == XB_KV_SCAN) {
        me->visited = st->scan(h);
        failed = me->visited < 0;
    } else if (run->op != XB_KV_MIXED) {
        failed = own_slice(run, cfg, h, p, me) != 0;
    } else if (p < writers) {
        failed = mixed_writer(run, cfg, h, p) != 0;
    } else {
        failed = mixed_reader(run, cfg, h, p - writers, me) != 0;
    }
    me->finish_ns = xb_now_ns();
    if (st->observe && st->observe(h, &me->at_end) != 0)
        failed = 1;
    if (st->close(h) != 0)
        failed = 1;
    return failed;
}

/* Run the children and time them: elapsed ns, 0 on failure, or -1 if the
 * store refused a process; *start_ns = when they were released. */
static int64_t run_children(const struct xb_kv_run *run,
                            const struct xb_kv_config *cfg, const char *dir,
                            uint64_t *start_ns)
{
    struct child_arg arg = {run, cfg, dir};
    struct xb_procs g;
    int ready = xb_procs_run(&g, cfg->procs, child, &arg);
    for (int p = 0; p < cfg->procs; p++)
        if (g.failed[p])
            fprintf(stderr, "%s: process %d of %d failed.\n",
                    run->store->prog, p + 1, cfg->procs);
    if (xb_procs_said(&g, PROC_REFUSED) != 0)
        return -1;
    if (ready != cfg->procs || g.nfailed != 0)
        return 0;
    uint64_t start = g.start_ns;
    uint64_t end = start;
    *start_ns = start;
    for (int p = 0; p < cfg->procs; p++)
        if (run->sh->proc[p].finish_ns > end)
            end = run->sh->proc[p].finish_ns;
    return end > start ? (int64_t)(end - start) : 1;
}

/* Parent: load every key into the new store, untimed. */
static int load_store(const struct xb_kv_run *run,
                      const struct xb_kv_config *cfg, const char *dir)
{
    const struct xb_kv_store *st = run->store;
    void *h;
    if (st->open(cfg, dir, XB_KV_LOAD, &h) != 0)
        return -1;
    int rc = st->load(h, run->keys, (size_t)run->count);
    if (st->close(h) != 0)
        rc = -1;
    return rc;
}

/* Conflict aborts of every process by the kind of page (the store's
 * classify), in the parent. */
typedef unsigned long long xb_kinds[XB_KV_PAGE_KINDS];

/* Process p's conflict pages by kind: the aborts on pages it did not
 * report go to the last kind.  0 or -1. */
static int classify(const struct xb_kv_run *run, void *h,
                    const struct xb_kv_counters *c, unsigned long long *kinds)
{
    const char *const *names = run->store->page_kind_names;
    uint64_t pages[XB_KV_CONFLICT_PAGES];
    int k[XB_KV_CONFLICT_PAGES], last = 0;
    int n = c->nconflict < 0                      ? 0
            : c->nconflict > XB_KV_CONFLICT_PAGES ? XB_KV_CONFLICT_PAGES
                                                  : c->nconflict;
    unsigned long long named = 0;

    while (names[last + 1] != NULL)
        last++;
    for (int i = 0; i < n; i++) {
        pages[i] = c->conflict[i].page;
        k[i] = last; /* what classify leaves unsaid */
    }
    if (n > 0 && run->store->classify(h, pages, (size_t)n, k) != 0)
        return -1;
    for (int i = 0; i < n; i++) {
        kinds[k[i] >= 0 && k[i] <= last ? k[i] : last] += c->conflict[i].aborts;
        named += c->conflict[i].aborts;
    }
    kinds[last] += c->conflict_aborts - named;
    return 0;
}

/* Parent: reopen the store; with --verify check every key, the number of
 * records and the store's invariants; *used = its bytes in use; kinds[p]
 * = process p's conflict aborts by kind, if the store classifies. */
static int check_store(const struct xb_kv_run *run,
                       const struct xb_kv_config *cfg, const char *dir,
                       uint64_t *used, xb_kinds *kinds)
{
    const struct xb_kv_store *st = run->store;
    void *h;
    if (st->open(cfg, dir, XB_KV_CHECK, &h) != 0)
        return -1;
    if (st->bytes_used)
        *used = st->bytes_used(h);
    long long bad = 0, checks = 0;
    for (int p = 0; p < cfg->procs && st->classify; p++)
        if (run->sh->proc[p].at_end.has_contention &&
            classify(run, h, &run->sh->proc[p].at_end, kinds[p]) != 0)
            bad++;
    unsigned char v[XB_KV_MAX_VALUE];
    struct xb_kv_key key;
    for (long long i = 0; run->verify && i < xb_kv_keys(run); i++, checks++) {
        size_t len = cfg->value_bytes;
        key.n = run->keys[i];
        xb_key_encode(key.n, key.bytes);
        int found = st->search(h, &key, v, &len);
        if ((found != 1 || !value_ok(key.n, v, len, cfg->value_bytes)) &&
            bad++ < 5)
            fprintf(stderr, "%s: verify: key %016llx %s.\n", st->prog,
                    (unsigned long long)key.n,
                    found == 1 ? "has a wrong value" : "is missing");
    }
    if (run->verify) {
        long long n = st->scan(h);
        checks++;
        if (n != run->distinct) {
            fprintf(stderr, "%s: verify: the store holds %lld records, not "
                    "%lld.\n", st->prog, n, run->distinct);
            bad++;
        }
    }
    char why[512];
    if (run->verify && st->check) {
        checks++;
        if (st->check(h, why, sizeof why) != 0) {
            fprintf(stderr, "%s: verify: %s\n", st->prog, why);
            bad++;
        }
    }
    if (st->close(h) != 0)
        bad++;
    if (bad != 0)
        fprintf(stderr, "%s: verify: %lld of %lld checks failed.\n", st->prog,
                bad, checks);
    return bad ? -1 : 0;
}

/* take evenly spaced samples of v[0..n). */
static void add_evenly(xb_result *r, const double *v, long long n,
                       long long take)
{
    if (take > n)
        take = n;
    for (long long j = 0; j < take; j++)
        xb_sample(r, v[j * n / take]);
}

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* The TOP_LATENCIES most expensive of the n operations v, most expensive
 * first (v is sorted). */
static void add_top(double *v, long long n, xb_result *top)
{
    qsort(v, (size_t)n, sizeof(double), cmp_desc);
    for (long long j = 0; j < n && j < TOP_LATENCIES; j++)
        xb_sample(top, v[j]);
}

static int cmp_asc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* With --passes: sample j is the median, over every pass of every
 * repetition, of that pass's j-th most expensive operation.  The top of
 * all passes pooled would be a rarer quantile the more passes there are
 * (and mostly timer interrupts); this keeps "the 100 most expensive of a
 * pass over the keys", with the noise of one pass averaged out. */
static void add_top_by_pass(struct xb_kv_run *run, xb_result *top)
{
    long long blocks = run->nlatency / run->count;
    long long k = run->count < TOP_LATENCIES ? run->count : TOP_LATENCIES;
    double *col = malloc((size_t)blocks * sizeof *col);
    if (col == NULL)
        xb_die_errno("malloc");
    for (long long b = 0; b < blocks; b++)
        qsort(run->all_latency + b * run->count, (size_t)run->count,
              sizeof(double), cmp_desc);
    for (long long j = 0; j < k; j++) {
        for (long long b = 0; b < blocks; b++)
            col[b] = run->all_latency[b * run->count + j];
        qsort(col, (size_t)blocks, sizeof *col, cmp_asc);
        xb_sample(top, blocks % 2 ? col[blocks / 2]
                                  : (col[blocks / 2 - 1] + col[blocks / 2]) / 2);
    }
    free(col);
}

/* The repetition's latencies: kept for the end (latency_top), or
 * 100,000/reps of them sampled now. */
static void add_latencies(struct xb_kv_run *run, xb_result *lat)
{
    long long ops = run->count * run->passes;
    if (run->store->latency_top) {
        memcpy(run->all_latency + run->nlatency, run->sh->latency_us,
               (size_t)ops * sizeof(double));
        run->nlatency += ops;
        return;
    }
    long long quota = MAX_LATENCY_SAMPLES / run->reps;
    add_evenly(lat, run->sh->latency_us, ops, quota < 1 ? 1 : quota);
}

/* log_bytes_per_insert and log_syncs_per_insert of one repetition. */
static void add_log(const struct xb_kv_run *run,
                    const struct xb_kv_config *cfg, const char *dir,
                    xb_result **rs)
{
    const struct xb_kv_store *st = run->store;
    const struct xb_kv_proc_share *ps = run->sh->proc;
    if (st->log_bytes) {
        xb_sample(rs[R_LOG_BYTES],
                  st->log_bytes(cfg, dir) / (double)run->count);
        return;
    }
    if (!ps[0].at_open.has_log)
        return;
    unsigned long long b0 = UINT64_MAX, b1 = 0, s0 = UINT64_MAX, s1 = 0;
    for (int p = 0; p < cfg->procs; p++) {
        if (ps[p].at_open.log_bytes < b0)
            b0 = ps[p].at_open.log_bytes;
        if (ps[p].at_end.log_bytes > b1)
            b1 = ps[p].at_end.log_bytes;
        if (ps[p].at_open.log_syncs < s0)
            s0 = ps[p].at_open.log_syncs;
        if (ps[p].at_end.log_syncs > s1)
            s1 = ps[p].at_end.log_syncs;
    }
    xb_sample(rs[R_LOG_BYTES], (double)(b1 - b0) / (double)run->count);
    xb_sample(rs[R_LOG_SYNCS], (double)(s1 - s0) / (double)run->count);
}

/* One process's contention samples: its counters' deltas, and its
 * conflict aborts by kind of page (the parent's classification; at
 * opening there are none). */
static void add_contention(const struct xb_kv_run *run,
                           const struct xb_kv_config *cfg,
                           const struct xb_kv_counters *a,
                           const struct xb_kv_counters *b,
                           const unsigned long long *conflicts,
                           xb_result **rs)
{
    unsigned kinds = run->store->page_kinds_of(cfg);
    unsigned long long commits = b->commits - a->commits;
    xb_sample(rs[R_RETRIES],
              commits ? (double)(b->conflict_aborts - a->conflict_aborts) /
                            (double)commits
                      : 0.0);
    xb_sample(rs[R_RETRY_MAX], (double)b->retries_max);
    xb_sample(rs[R_ABORTED_TIME], (double)(b->aborted_ns - a->aborted_ns) / 1e6);
    xb_sample(rs[R_WAIT_TIME], (double)(b->waited_ns - a->waited_ns) / 1e6);
    xb_sample(rs[R_ESCALATIONS], (double)(b->escalations - a->escalations));
    /* Per commit, so only where the process committed (an insert's). */
    if (commits > 0) {
        xb_sample(rs[R_FAULTS],
                  (double)(b->faults - a->faults) / (double)commits);
        xb_sample(rs[R_COPIES],
                  (double)(b->page_copies - a->page_copies) / (double)commits);
        xb_sample(rs[R_NEW_PAGES],
                  (double)(b->new_pages - a->new_pages) / (double)commits);
    }
    for (int k = 0; k < XB_KV_PAGE_KINDS; k++)
        if (kinds & (1u << k))
            xb_sample(rs[R_CONFLICTS + k], (double)conflicts[k]);
}

/* --op mixed: the inserts per second of the writers (from the start to
 * the last writer's finish), the searches per second of the readers (to
 * the last reader's finish), and both latencies; *ins and *srch = the
 * rates. */
static void add_mixed(const struct xb_kv_run *run,
                      const struct xb_kv_config *cfg, uint64_t start,
                      xb_result **rs, double *ins, double *srch)
{
    const struct xb_kv_proc_share *ps = run->sh->proc;
    const double *lat = run->sh->latency_us;
    int writers = writers_of(run, cfg);
    uint64_t wend = start + 1, rend = start + 1;
    long long searches = 0, kept = 0, quota = MAX_LATENCY_SAMPLES / run->reps;
    double *found = malloc((size_t)run->count * sizeof *found);
    if (found == NULL)
        xb_die_errno("malloc");
    for (int p = 0; p < cfg->procs; p++) {
        uint64_t *end = p < writers ? &wend : &rend;
        if (ps[p].finish_ns > *end)
            *end = ps[p].finish_ns;
        if (p < writers)
            continue;
        /* A reader's slots hold its latest searches, all of them filled
         * once it went round its slice. */
        size_t begin, stop;
        xb_workload_slice((size_t)run->count, p - writers, run->readers,
                          &begin, &stop);
        long long n = ps[p].searches < (long long)(stop - begin)
                          ? ps[p].searches
                          : (long long)(stop - begin);
        memcpy(found + kept, lat + run->count + (long long)begin,
               (size_t)n * sizeof *found);
        kept += n;
        searches += ps[p].searches;
    }
    *ins = (double)run->count / ((double)(wend - start) / 1e9);
    *srch = (double)searches / ((double)(rend - start) / 1e9);
    xb_sample(rs[R_INSERT_RATE], *ins);
    if (run->readers > 0) /* --readers 0: the writers' baseline alone */
        xb_sample(rs[R_SEARCH_RATE], *srch);
    add_evenly(rs[R_LATENCY], lat, run->count, quota < 1 ? 1 : quota);
    add_evenly(rs[R_SEARCH_LATENCY], found, kept, quota < 1 ? 1 : quota);
    free(found);
}

/* faults_per_search: a searching process's faults (the store's own, LIBXAC's
 * xStats faults) per search. */
static void add_search_faults(const struct xb_kv_proc_share *ps,
                              xb_result *r)
{
    if (ps->searches > 0 && ps->at_open.has_contention)
        xb_sample(r, (double)(ps->at_end.faults - ps->at_open.faults) /
                         (double)ps->searches);
}

/* Repetition r; 0, 1 (failed) or 2 (refused). */
static int repetition(struct xb_kv_run *run, const struct xb_kv_config *cfg,
                      const char *scratch, int index, long long r,
                      xb_result **rs, const char *label)
{
    const struct xb_kv_store *st = run->store;
    char dir[4096], name[64];
    snprintf(name, sizeof name, "cfg-%d-rep-%lld", index, r);
    xb_path(dir, sizeof dir, scratch, name);
    if (mkdir(dir, 0700) != 0)
        xb_die_errno("mkdir");
    if (st->create(cfg, dir) != 0)
        return 1;
    if (run->op != XB_KV_INSERT && load_store(run, cfg, dir) != 0)
        return 1;
    if (st->log_mark)
        st->log_mark(cfg, dir);
    (void)xb_settle(dir); /* noise only: a failure changes nothing */
    memset(run->sh, 0, run->sh_bytes);
    run->sh->writers_left = writers_of(run, cfg);
    double written = children_write_bytes();
    uint64_t start = 0;
    int64_t ns = run_children(run, cfg, dir, &start);
    written = children_write_bytes() - written;
    if (ns < 0) {
        fprintf(stderr, "%s: %s\n", st->prog, st->refused);
        return 2;
    }
    if (ns == 0)
        return 1;
    double secs = (double)ns / 1e9, rate, search_rate = 0;
    int inserts = run->op == XB_KV_INSERT || run->op == XB_KV_MIXED;
    if (run->op == XB_KV_SCAN) {
        long long visited = 0;
        for (int p = 0; p < cfg->procs; p++) {
            if (run->sh->proc[p].visited != run->distinct) {
                fprintf(stderr, "%s: scan visited %lld records, not %lld.\n",
                        st->prog, run->sh->proc[p].visited, run->distinct);
                return 1;
            }
            visited += run->sh->proc[p].visited;
        }
        rate = (double)visited / secs;
    } else if (run->op == XB_KV_MIXED) {
        add_mixed(run, cfg, start, rs, &rate, &search_rate);
    } else {
        rate = (double)(run->count * run->passes) / secs;
        add_latencies(run, rs[R_LATENCY]);
    }
    if (run->op != XB_KV_MIXED)
        xb_sample(rs[R_THROUGHPUT], rate);
    if (inserts)
        add_log(run, cfg, dir, rs);
    uint64_t used = 0;
    static xb_kinds kinds[XB_PROCS_MAX];
    memset(kinds, 0, sizeof kinds);
    if ((run->verify || st->bytes_used || st->classify) &&
        check_store(run, cfg, dir, &used, kinds) != 0)
        return 1;
    /* Aborts and contention are the writers' (a mixed run's readers run
     * queries, which never abort); faults per search the searchers'. */
    for (int p = 0; p < cfg->procs; p++) {
        const struct xb_kv_proc_share *ps = &run->sh->proc[p];
        add_search_faults(ps, rs[R_SEARCH_FAULTS]);
        if (p >= writers_of(run, cfg))
            continue;
        if (ps->at_open.has_aborts)
            xb_sample(rs[R_ABORTS],
                      (double)(ps->at_end.aborts - ps->at_open.aborts));
        if (ps->at_open.has_contention)
            add_contention(run, cfg, &ps->at_open, &ps->at_end, kinds[p],
                           rs);
    }
    if (inserts && on_storage(dir))
        xb_sample(rs[R_WRITE_BYTES], written / (double)run->count);
    if (run->op == XB_KV_INSERT && st->bytes_used)
        xb_sample(rs[R_BYTES], (double)used / (double)run->count);
    xb_remove_tree(dir);
    double done = (double)(index * run->reps + r + 1) /
                  (double)(run->nconfigs * run->reps);
    if (run->op == XB_KV_MIXED && run->readers == 0)
        xb_progress(done, "%s: mixed repetition %lld of %lld, %.0f inserts/s "
                    "with nobody searching", label, r + 1, run->reps, rate);
    else if (run->op == XB_KV_MIXED)
        xb_progress(done, "%s: mixed repetition %lld of %lld, %.0f inserts/s "
                    "beside %.0f searches/s", label, r + 1, run->reps, rate,
                    search_rate);
    else
        xb_progress(done, "%s: %s repetition %lld of %lld, %.0f ops/s",
                    label, run->op_name, r + 1, run->reps, rate);
    return 0;
}

void xb_kv_label(const struct xb_kv_store *st,
                 const struct xb_kv_config *cfg, char *buf, size_t len)
{
    if (st->label)
        st->label(cfg, buf, len);
    else
        snprintf(buf, len, "%s %s", st->sut, cfg->mode);
}

const char *xb_kv_durability_of(const struct xb_kv_store *st,
                                const char *mode)
{
    for (const char *const *m = st->durable_modes; *m != NULL; m++)
        if (strcmp(*m, mode) == 0)
            return "durable";
    return "nondurable";
}

static void add_params(const struct xb_kv_run *run,
                       const struct xb_kv_config *cfg, xb_result *r)
{
    xb_param_int(r, "count", run->count);
    if (run->passes > 1) /* absent: one pass, as before the option */
        xb_param_int(r, "passes", run->passes);
    xb_param_int(r, "procs", cfg->procs);
    if (run->op == XB_KV_MIXED)
        xb_param_int(r, "readers", run->readers);
    xb_param_str(r, "durability", xb_kv_durability_of(run->store, cfg->mode));
    xb_param_str(r, "mode", cfg->mode);
    xb_param_str(r, "order", xb_order_name(run->order));
    xb_param_int(r, "seed", (long long)run->seed);
    xb_param_int(r, "key_bytes", XB_KEY_BYTES);
    xb_param_int(r, "value_bytes", cfg->value_bytes);
    run->store->params(cfg, &run->sh->proc[0].at_open, r);
}

int xb_kv_measure(struct xb_kv_run *run, const struct xb_kv_config *cfg,
                  const char *scratch, int index)
{
    const struct xb_kv_store *st = run->store;
    const char *sut = st->sut, *op = run->op_name;
    char label[128];
    xb_kv_label(st, cfg, label, sizeof label);
    /* Every result but the conflicts' ("%s": the op's name). */
    static const struct {
        const char *metric, *unit;
        enum xb_better better;
    } res[R_CONFLICTS] = {
        [R_THROUGHPUT] = {"throughput", "ops/s", XB_HIGHER},
        [R_LATENCY] = {"%s_latency", "us", XB_LOWER},
        [R_TOP] = {"%s_latency_top", "us", XB_LOWER},
        [R_BYTES] = {"bytes_per_key", "bytes", XB_LOWER},
        [R_LOG_BYTES] = {"log_bytes_per_insert", "bytes", XB_LOWER},
        [R_LOG_SYNCS] = {"log_syncs_per_insert", "ratio", XB_LOWER},
        [R_ABORTS] = {"aborts", "count", XB_LOWER},
        [R_RETRIES] = {"retries_per_commit", "ratio", XB_LOWER},
        [R_RETRY_MAX] = {"retries_max", "count", XB_LOWER},
        [R_ABORTED_TIME] = {"aborted_time", "ms", XB_LOWER},
        [R_WAIT_TIME] = {"wait_time", "ms", XB_LOWER},
        [R_ESCALATIONS] = {"escalations", "count", XB_LOWER},
        [R_FAULTS] = {"faults_per_commit", "ratio", XB_LOWER},
        [R_COPIES] = {"page_copies_per_commit", "ratio", XB_LOWER},
        [R_NEW_PAGES] = {"new_pages_per_commit", "ratio", XB_LOWER},
        [R_WRITE_BYTES] = {"write_bytes_per_insert", "bytes", XB_LOWER},
        [R_SEARCH_FAULTS] = {"faults_per_search", "ratio", XB_LOWER},
        [R_INSERT_RATE] = {"insert_throughput", "ops/s", XB_HIGHER},
        [R_SEARCH_RATE] = {"search_throughput", "ops/s", XB_HIGHER},
        [R_SEARCH_LATENCY] = {"search_latency", "us", XB_LOWER}};
    xb_result *rs[NRESULTS] = {NULL};
    char metric[64];
    /* A mixed run's insert_latency sits beside its search_latency. */
    const char *timed = run->op == XB_KV_MIXED ? "insert" : op;
    for (int k = 0; k < R_CONFLICTS; k++) {
        snprintf(metric, sizeof metric, res[k].metric, timed);
        rs[k] = xb_result_new("search-tree", op, sut, metric, res[k].unit,
                              res[k].better);
    }
    const char *const *names = st->page_kind_names;
    for (int k = 0; names != NULL && k < XB_KV_PAGE_KINDS && names[k]; k++) {
        snprintf(metric, sizeof metric, "conflict_aborts_%s", names[k]);
        rs[R_CONFLICTS + k] =
            xb_result_new("search-tree", op, sut, metric, "count", XB_LOWER);
    }
    int rc = 0;
    run->nlatency = 0;
    for (long long r = 0; r < run->reps && rc == 0; r++)
        rc = repetition(run, cfg, scratch, index, r, rs, label);
    if (rc == 0 && run->nlatency > 0) {
        add_evenly(rs[R_LATENCY], run->all_latency, run->nlatency,
                   MAX_LATENCY_SAMPLES);
        if (run->passes > 1)
            add_top_by_pass(run, rs[R_TOP]);
        else
            add_top(run->all_latency, run->nlatency, rs[R_TOP]);
    }
    for (int k = 0; k < NRESULTS; k++) {
        if (rs[k] == NULL)
            continue;
        if (rc != 0 || xb_sample_count(rs[k]) == 0) {
            xb_result_free(rs[k]);
            continue;
        }
        add_params(run, cfg, rs[k]);
        xb_result_emit(rs[k]);
    }
    return rc;
}
