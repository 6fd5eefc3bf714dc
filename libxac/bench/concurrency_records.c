/* concurrency_records: the multi-process record database of seeds 004
 * (Stevens and Rago, APUE 2nd ed., section 20.9), with four kinds of
 * concurrency control.
 *
 * The parent creates an empty store, forks --procs children and waits.
 * Each child works only on records of its own (APUE's test program):
 *   1. store --nrec new records;
 *   2. fetch each of them;
 *   3. 5*nrec times: fetch a random own record; every 37th time delete a
 *      random one, every 11th time store a new one and fetch it back, every
 *      17th time replace a random one with new data;
 *   4. delete every record it still has, each delete followed by 10 random
 *      fetches.
 * That is about ten times more fetches than stores, and than deletes.
 *
 * The store (common/record_store.h) is one file of fixed 128-byte record
 * slots on hash chains and a free list.  Variants (result param
 * "variant"):
 *   nolock  no locking at all (sut "os")
 *   coarse  fcntl locks on the whole file (APUE section 20.6) (sut "os")
 *   fine    fcntl byte-range locks per hash chain and on the free list
 *           (APUE section 20.8) (sut "os")
 *   libxac  the same store in an xMmap()ped file, every store, fetch and
 *           delete one transaction, retried when it aborts (sut "libxac");
 *           --durability durable forces every commit to LIBXAC's log
 *           (xInit(DURABLE)), nondurable (the default) does not
 * The three os variants access the file with pread/pwrite as APUE does;
 * libxac reads and writes the segment in memory.
 *
 * Every child knows what each of its records must contain, so every fetch
 * is checked; without locking, races show up as errors (see
 * docs/benchmarks-records.md): a record missing or still present after its
 * delete, a record whose checksum, key, version or data is wrong, a chain
 * pointer out of range or a cycle, the free list running dry.  After the
 * children exit the parent checks the whole file: all chains empty, every
 * slot on the free list exactly once.  Locking variants must report 0.
 *
 * Results: suite "concurrency", benchmark "records", params {variant, procs,
 * nrec} (and durability for the libxac variant), metrics wall_time (s,
 * from the start signal until the last child is reaped), cpu_time,
 * user_time, sys_time (s; the children's totals from wait4), errors
 * (count), slots_per_op (count: record slots an operation's chain walk
 * read, its committed try only) and, for libxac, faults_per_op (count:
 * xStats() access faults per operation, aborted tries included); one
 * sample per repetition, each on a fresh store.  The chains hold every
 * process's records, so an operation reads more slots the more processes
 * there are: the work per operation grows with --procs times --nrec, and
 * slots_per_op says by how much (docs/benchmarks-records.md).  cpu_time is
 * exact (the scheduler's running time); the kernel splits it into user and
 * sys by the timer ticks that land in each mode, a few dozen in a quick
 * variant, so the split moves by a third from run to run.  --quick, the
 * profile the lab watches, reports cpu_time and leaves the split out.  If xInit() returns
 * XAC_EBUSY (every process slot of the control file taken) the libxac
 * variant is reported unsupported on stderr and has no results; that is
 * not a failure.
 */
#include "clock.h"
#include "options.h"
#include "procs.h"
#include "record_store.h"
#include "result.h"
#include "scratch.h"
#include "workload.h"
#include "xac.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROG "concurrency_records"
#define MAX_PROCS XB_PROCS_MAX
#define CHILD_BUSY 'b'
#define CHILD_FAILED 'e'

enum metric {
    M_WALL,
    M_CPU,
    M_USER,
    M_SYS,
    M_ERRORS,
    M_SLOTS,  /* record slots an operation's chain walk read, on average */
    M_FAULTS, /* libxac only: access faults per operation, retries too */
    NMETRICS
};

enum variant { V_NOLOCK, V_COARSE, V_FINE, V_LIBXAC, NVARIANTS };
static const char *const variant_names[] = {"nolock", "coarse", "fine",
                                            "libxac", NULL};
static const enum rs_locking variant_locking[] = {RS_NOLOCK, RS_COARSE,
                                                  RS_FINE, RS_NOLOCK};

/* Errors a child or the final check can find. */
struct errors {
    long long missing;  /* own record not found, or not found to delete */
    long long stale;    /* record found after it was deleted, or twice */
    long long corrupt;  /* checksum, key, version or data wrong */
    long long index;    /* chain or free-list pointer out of range, cycle */
    long long full;     /* free list empty (slots were lost) */
};

static long long errs_total(const struct errors *e)
{
    return e->missing + e->stale + e->corrupt + e->index + e->full;
}

/* What a child leaves for its parent when it is done. */
struct child_report {
    struct errors errs;
    long long fetches, stores, deletes, aborts;
    unsigned long long slots_read; /* by the operations' committed tries */
    unsigned long long faults;     /* libxac: xStats() faults, every try */
};

/* ---- one child --------------------------------------------------------- */

enum op { OP_FETCH, OP_INSERT, OP_REPLACE, OP_DELETE };

/* The contents of version ver of key: its length and bytes. */
static void make_record(uint64_t key, uint32_t ver, struct rs_slot *sl)
{
    uint64_t st = key * 0x9e3779b97f4a7c15u ^ ((uint64_t)ver << 17);
    uint64_t w = xb_splitmix64(&st);
    memset(sl, 0, sizeof *sl);
    sl->sl_key = key;
    sl->sl_ver = ver;
    sl->sl_len = RS_DATA_MIN + (uint32_t)(w % (RS_DATA_MAX - RS_DATA_MIN + 1));
    for (uint32_t i = 0; i < sl->sl_len; i += 8) {
        w = xb_splitmix64(&st);
        memcpy(sl->sl_data + i, &w,
               sl->sl_len - i < 8 ? sl->sl_len - i : 8);
    }
    sl->sl_sum = rs_sum(key, ver, sl->sl_len, sl->sl_data);
}

struct child {
    enum variant v;
    struct rs s;
    struct xb_rng rng;
    uint64_t base_key;
    uint32_t nkeys, maxkeys;
    uint32_t *ver;        /* current version of key i; 0 = absent */
    struct child_report rep;
};

/* Run one operation; for libxac as a transaction, retried until it
 * commits.  Returns the operation's result; *sl gets a fetched record. */
static int run_op(struct child *c, enum op op, const struct rs_slot *rec,
                  uint64_t key, struct rs_slot *sl)
{
    int rc = 0;
    for (unsigned attempt = 0;; attempt++) {
        /* An aborted try's chain walk is not the operation's: forget it. */
        unsigned long long slots_before = c->s.slots_read;
        if (c->v == V_LIBXAC) {
            int b = xbegin();
            if (b != 0) {
                fprintf(stderr, "%s: xbegin: %s\n", PROG, xStrerror(b));
                _exit(1);
            }
        }
        switch (op) {
        case OP_FETCH:
            rc = rs_fetch(&c->s, key, sl);
            break;
        case OP_INSERT:
            rc = rs_insert(&c->s, rec);
            break;
        case OP_REPLACE:
            rc = rs_replace(&c->s, rec);
            break;
        case OP_DELETE:
            rc = rs_delete(&c->s, key);
            break;
        }
        if (c->v != V_LIBXAC)
            return rc;
        int e = xend();
        if (e == COMMITTED)
            return rc;
        if (e != ABORTED) {
            fprintf(stderr, "%s: xend: %s\n", PROG, xStrerror(e));
            _exit(1);
        }
        c->rep.aborts++;
        c->s.slots_read = slots_before;
        /* randomized exponential backoff, at most about 1 ms */
        unsigned shift = attempt < 10 ? attempt : 10;
        struct timespec ts = {
            0, (long)(xb_rng_below(&c->rng, (1u << shift)) * 1000)};
        if (ts.tv_nsec > 0)
            nanosleep(&ts, NULL);
    }
}

static void check_fetch(struct child *c, uint32_t i)
{
    uint64_t key = c->base_key + i;
    struct rs_slot sl, want;
    c->rep.fetches++;
    int rc = run_op(c, OP_FETCH, NULL, key, &sl);
    if (rc < 0) {
        c->rep.errs.index++;
    } else if (c->ver[i] == 0) {
        if (rc == 1)
            c->rep.errs.stale++;
    } else if (rc == 0) {
        c->rep.errs.missing++;
    } else {
        make_record(key, c->ver[i], &want);
        if (sl.sl_len > RS_DATA_MAX ||
            sl.sl_sum != rs_sum(sl.sl_key, sl.sl_ver, sl.sl_len, sl.sl_data) ||
            sl.sl_ver != want.sl_ver || sl.sl_len != want.sl_len ||
            memcmp(sl.sl_data, want.sl_data, want.sl_len) != 0)
            c->rep.errs.corrupt++;
    }
}

static void do_insert(struct child *c)
{
    if (c->nkeys >= c->maxkeys)
        return;
    uint32_t i = c->nkeys++;
    struct rs_slot rec;
    make_record(c->base_key + i, 1, &rec);
    c->rep.stores++;
    int rc = run_op(c, OP_INSERT, &rec, 0, NULL);
    if (rc == 0 || rc == 1) {
        c->ver[i] = 1;
        if (rc == 1)
            c->rep.errs.stale++;
    } else if (rc == -2) {
        c->rep.errs.full++;
    } else {
        c->rep.errs.index++;
    }
}

static void do_replace(struct child *c, uint32_t i)
{
    struct rs_slot rec;
    uint32_t nv = c->ver[i] == 0 ? 0 : c->ver[i] + 1;
    make_record(c->base_key + i, nv == 0 ? 1 : nv, &rec);
    c->rep.stores++;
    int rc = run_op(c, OP_REPLACE, &rec, 0, NULL);
    if (rc < 0)
        c->rep.errs.index++;
    else if (rc == 0 && nv == 0)
        c->rep.errs.stale++;
    else if (rc == 1 && nv != 0)
        c->rep.errs.missing++;
    if (rc == 0 && nv != 0)
        c->ver[i] = nv;
}

static void do_delete(struct child *c, uint32_t i)
{
    c->rep.deletes++;
    int rc = run_op(c, OP_DELETE, NULL, c->base_key + i, NULL);
    if (rc < 0)
        c->rep.errs.index++;
    else if (rc == 0 && c->ver[i] == 0)
        c->rep.errs.stale++;
    else if (rc == 1 && c->ver[i] != 0)
        c->rep.errs.missing++;
    c->ver[i] = 0;
}

static void child_workload(struct child *c, uint32_t nrec)
{
    uint32_t i;
    for (i = 0; i < nrec; i++)
        do_insert(c);
    for (i = 0; i < nrec; i++)
        check_fetch(c, i);
    for (i = 0; i < 5 * nrec; i++) {
        check_fetch(c, (uint32_t)xb_rng_below(&c->rng, c->nkeys));
        if (i % 37 == 0)
            do_delete(c, (uint32_t)xb_rng_below(&c->rng, c->nkeys));
        if (i % 11 == 0) {
            do_insert(c);
            check_fetch(c, c->nkeys - 1);
        }
        if (i % 17 == 0)
            do_replace(c, (uint32_t)xb_rng_below(&c->rng, c->nkeys));
    }
    for (i = 0; i < c->nkeys; i++) {
        if (c->ver[i] == 0)
            continue;
        do_delete(c, i);
        for (int j = 0; j < 10; j++)
            check_fetch(c, (uint32_t)xb_rng_below(&c->rng, c->nkeys));
    }
}

static uint32_t keys_per_child(uint32_t nrec)
{
    return nrec + (5 * nrec + 10) / 11 + 1;
}

struct run {
    enum variant v;
    const char *path, *ctl;
    size_t len;
    uint32_t nslots, nrec;
    int procs;
    int xflags;                  /* xInit flags of the libxac variant */
    int keep_pages;              /* --keep-pages: xSetKeepPages(1) */
    struct child_report *report; /* one per child, shared */
};

/* Open the store as the variant does: 0, or CHILD_BUSY / CHILD_FAILED. */
static char open_store(const struct run *run, struct rs *s)
{
    s->locking = variant_locking[run->v];
    s->nslots = run->nslots;
    s->fd = -1;
    if (run->v != V_LIBXAC) {
        s->fd = open(run->path, O_RDWR);
        if (s->fd >= 0)
            return 0;
        fprintf(stderr, "%s: cannot open the store: %s\n", PROG,
                strerror(errno));
        return CHILD_FAILED;
    }
    int rc = xInit(run->ctl, run->xflags);
    if (rc != 0) {
        if (rc == XAC_EBUSY)
            return CHILD_BUSY;
        fprintf(stderr, "%s: xInit: %s\n", PROG, xStrerror(rc));
        return CHILD_FAILED;
    }
    /* Speedups compare 1 and P processes under one mechanism: the
     * thesis's, where every transaction takes its pages afresh (a process
     * alone would keep them, xSetKeepPages).  --keep-pages measures the
     * library's default instead (docs/libxac.md, "Kept pages"). */
    xSetKeepPages(run->keep_pages);
    void *m = xMmap(run->path, run->len);
    if (m == MAP_FAILED) {
        fprintf(stderr, "%s: xMmap: %s\n", PROG, strerror(errno));
        xShutdown();
        return CHILD_FAILED;
    }
    s->base = m;
    return 0;
}

/* Child k: open the store, say how that went, wait for the start, work,
 * leave its report. */
static int child_main(const struct xb_proc *self, int k, void *arg)
{
    const struct run *run = arg;
    struct child c;
    memset(&c, 0, sizeof c);
    c.v = run->v;
    char status = open_store(run, &c.s);
    c.maxkeys = keys_per_child(run->nrec);
    c.ver = calloc(c.maxkeys, sizeof *c.ver);
    if (c.ver == NULL && status == 0)
        status = CHILD_FAILED;
    c.base_key = ((uint64_t)(k + 1) << 32);
    xb_rng_seed(&c.rng, XB_WORKLOAD_SEED ^ ((uint64_t)k * 0x1000193u));
    if (xb_proc_ready(self, status == 0 ? XB_PROC_READY : status)) {
        child_workload(&c, run->nrec);
        c.rep.slots_read = c.s.slots_read;
        struct xac_stats st;
        if (c.v == V_LIBXAC && xStats(&st) == 0)
            c.rep.faults = st.faults;
        run->report[k] = c.rep;
    }
    if (c.s.base != NULL) {
        xMunmap(run->path);
        xShutdown();
    }
    if (c.s.fd >= 0)
        close(c.s.fd);
    free(c.ver);
    return status == CHILD_FAILED;
}

/* ---- the parent -------------------------------------------------------- */

struct outcome {
    int unsupported;
    double wall, user, sys;
    long long errors;
    struct child_report sum;
    double slots_per_op, faults_per_op; /* over every operation */
};

static void add_report(struct child_report *sum, const struct child_report *r)
{
    sum->errs.missing += r->errs.missing;
    sum->errs.stale += r->errs.stale;
    sum->errs.corrupt += r->errs.corrupt;
    sum->errs.index += r->errs.index;
    sum->errs.full += r->errs.full;
    sum->fetches += r->fetches;
    sum->stores += r->stores;
    sum->deletes += r->deletes;
    sum->aborts += r->aborts;
    sum->slots_read += r->slots_read;
    sum->faults += r->faults;
}

static void one_run(const struct run *run, struct outcome *o)
{
    struct xb_procs g;
    memset(o, 0, sizeof *o);
    memset(run->report, 0, (size_t)run->procs * sizeof *run->report);
    rs_create(run->path, run->nslots, run->len);
    int ready = xb_procs_run(&g, run->procs, child_main, (void *)run);
    int busy = xb_procs_said(&g, CHILD_BUSY);
    int failed = run->procs - ready - busy;
    o->wall = (double)(g.end_ns - g.start_ns) / 1e9;
    o->user = g.user_s;
    o->sys = g.sys_s;
    if (failed || g.nfailed) {
        fprintf(stderr, "%s: variant %s: %d of %d children failed.\n", PROG,
                variant_names[run->v], failed > g.nfailed ? failed : g.nfailed,
                run->procs);
        exit(1);
    }
    if (busy) {
        o->unsupported = 1;
        return;
    }
    for (int k = 0; k < run->procs; k++)
        add_report(&o->sum, &run->report[k]);
    long long inconsistent = rs_final_check(run->path, run->nslots);
    o->errors = errs_total(&o->sum.errs) + inconsistent;
    double ops = (double)(o->sum.fetches + o->sum.stores + o->sum.deletes);
    o->slots_per_op = (double)o->sum.slots_read / ops;
    o->faults_per_op = (double)o->sum.faults / ops;
    fprintf(stderr,
            "%s: %s procs %d nrec %u: %.3f s wall, %lld fetches, %lld stores, "
            "%lld deletes, %lld aborts, %.1f slots read per operation; "
            "errors: %lld missing, %lld stale, "
            "%lld corrupt, %lld index, %lld free list empty, %lld "
            "inconsistencies in the final file\n",
            PROG, variant_names[run->v], run->procs, run->nrec, o->wall,
            o->sum.fetches, o->sum.stores, o->sum.deletes, o->sum.aborts,
            o->slots_per_op,
            o->sum.errs.missing, o->sum.errs.stale, o->sum.errs.corrupt,
            o->sum.errs.index, o->sum.errs.full, inconsistent);
    if (run->v != V_NOLOCK && o->errors != 0)
        fprintf(stderr, "%s: variant %s reported %lld errors although it "
                "locks: a bug in the program or the library.\n",
                PROG, variant_names[run->v], o->errors);
}

int main(int argc, char **argv)
{
    long long reps = -1, procs = -1, nrec = -1;
    int quick = 0, keep_pages = 0;
    const char *dir = NULL;
    static const char *const vchoices[] = {"all", "nolock", "coarse", "fine",
                                           "libxac", NULL};
    const char *which = "all";
    static const char *const durs[] = {"nondurable", "durable", NULL};
    const char *dur = "nondurable";
    struct xb_opt opts[] = {
        {"quick", XB_OPT_FLAG, &quick, 0, 0, NULL,
         "small sizes (2 processes, 500 records each, 5 repetitions), "
         "under 10 s; CPU time without its user/sys split"},
        {"reps", XB_OPT_INT, &reps, 1, 100000, NULL,
         "repetitions per variant, each on a fresh store (default 3; quick "
         "5)"},
        {"procs", XB_OPT_INT, &procs, 1, MAX_PROCS, NULL,
         "child processes (default 4; quick 2)"},
        {"nrec", XB_OPT_INT, &nrec, 1, 1000000, NULL,
         "records each child writes first (default 500, as APUE)"},
        {"variant", XB_OPT_CHOICE, &which, 0, 0, vchoices,
         "the concurrency control to run (default all)"},
        {"durability", XB_OPT_CHOICE, &dur, 0, 0, durs,
         "xInit flag of the libxac variant: nondurable (default) or durable "
         "(every commit forced to the log)"},
        {"keep-pages", XB_OPT_FLAG, &keep_pages, 0, 0, NULL,
         "libxac variant: keep pages readable between transactions "
         "(xSetKeepPages(1), the library's default; param keep_pages), "
         "not the thesis's fault on every first touch"},
        {"dir", XB_OPT_STR, &dir, 0, 0, NULL,
         "directory for the store (default $TMPDIR, else /tmp)"},
        {0}};
    xb_opts_parse(argc, argv,
                  "Seeds 004 (APUE 20.9): N processes store, fetch and delete "
                  "records of their own\nin one shared record file, with no "
                  "locking, coarse or fine fcntl locking, or\nLIBXAC "
                  "transactions.  Reports wall and CPU time (and its user "
                  "and sys parts)\nand the errors seen.",
                  opts);
    /* Quick runs take 50-90 ms a variant: one was a coin toss (wall time
     * 3 % apart run to run, sys time 5-10 %); the median of 5 is within
     * 1-4 % (docs/benchmarks-records.md, "Quick runs"). */
    if (reps < 0)
        reps = quick ? 5 : 3;
    if (procs < 0)
        procs = quick ? 2 : 4;
    if (nrec < 0)
        nrec = 500;

    const char *work = xb_scratch_create(dir, PROG);
    char path[4096], ctl[4096];
    xb_path(path, sizeof path, work, "records.db");
    xb_path(ctl, sizeof ctl, work, "xac-ctl");
    uint64_t nslots64 = (uint64_t)procs * keys_per_child((uint32_t)nrec) + 16;
    size_t len = rs_file_bytes((uint32_t)nslots64,
                               (size_t)sysconf(_SC_PAGESIZE));
    size_t report_bytes = (size_t)procs * sizeof(struct child_report);
    struct child_report *report = xb_shared_new(report_bytes);

    int nv = 0;
    for (int v = 0; v < NVARIANTS; v++)
        nv += strcmp(which, "all") == 0 || strcmp(which, variant_names[v]) == 0;
    int done = 0;
    for (int v = 0; v < NVARIANTS; v++) {
        if (strcmp(which, "all") != 0 && strcmp(which, variant_names[v]) != 0)
            continue;
        struct run run = {.v = (enum variant)v, .path = path, .ctl = ctl,
                          .len = len, .nslots = (uint32_t)nslots64,
                          .nrec = (uint32_t)nrec, .procs = (int)procs,
                          .xflags = strcmp(dur, "durable") == 0 ? DURABLE
                                                                : NONDURABLE,
                          .keep_pages = keep_pages,
                          .report = report};
        const char *sut = v == V_LIBXAC ? "libxac" : "os";
        xb_result *rs[NMETRICS] = {
            [M_WALL] = xb_result_new("concurrency", "records", sut,
                                     "wall_time", "s", XB_LOWER),
            [M_CPU] = xb_result_new("concurrency", "records", sut,
                                    "cpu_time", "s", XB_LOWER),
            [M_USER] = xb_result_new("concurrency", "records", sut,
                                     "user_time", "s", XB_LOWER),
            [M_SYS] = xb_result_new("concurrency", "records", sut,
                                    "sys_time", "s", XB_LOWER),
            [M_ERRORS] = xb_result_new("concurrency", "records", sut,
                                       "errors", "count", XB_LOWER),
            [M_SLOTS] = xb_result_new("concurrency", "records", sut,
                                      "slots_per_op", "count", XB_LOWER),
            [M_FAULTS] = xb_result_new("concurrency", "records", sut,
                                       "faults_per_op", "count", XB_LOWER)};
        int unsupported = 0;
        for (long long r = 0; r < reps && !unsupported; r++) {
            struct outcome o;
            xb_remove_tree(ctl);
            one_run(&run, &o);
            unsupported = o.unsupported;
            if (!unsupported) {
                xb_sample(rs[M_WALL], o.wall);
                xb_sample(rs[M_CPU], o.user + o.sys);
                xb_sample(rs[M_USER], o.user);
                xb_sample(rs[M_SYS], o.sys);
                xb_sample(rs[M_ERRORS], (double)o.errors);
                xb_sample(rs[M_SLOTS], o.slots_per_op);
                xb_sample(rs[M_FAULTS], o.faults_per_op);
            }
            xb_progress(((double)done + (double)(r + 1) / (double)reps) / nv,
                        "variant %s repetition %lld of %lld",
                        variant_names[v], r + 1, reps);
        }
        done++;
        for (int j = 0; j < NMETRICS; j++) {
            if (unsupported || (quick && (j == M_USER || j == M_SYS)) ||
                (j == M_FAULTS && v != V_LIBXAC)) {
                xb_result_free(rs[j]);
                continue;
            }
            xb_param_str(rs[j], "variant", variant_names[v]);
            xb_param_int(rs[j], "procs", procs);
            xb_param_int(rs[j], "nrec", nrec);
            if (v == V_LIBXAC)
                xb_param_str(rs[j], "durability", dur);
            if (v == V_LIBXAC && keep_pages)
                xb_param_bool(rs[j], "keep_pages", 1);
            xb_result_emit(rs[j]);
        }
        if (unsupported)
            fprintf(stderr,
                    "%s: xInit returned XAC_EBUSY (every process slot of the "
                    "control file is taken); no result for variant libxac "
                    "with %lld processes.\n",
                    PROG, procs);
    }
    xb_shared_free(report, report_bytes);
    unlink(path);
    return 0;
}
