/* page_touch: thesis figures 4-1 and 4-3, the page-touch experiment.
 *
 * Each transaction reads or writes n consecutive pages of an xMmap()ped
 * file, n = 1, 2, 4 ... --max-pages, without and with the advisory function
 * setPageAccess().  One result per (n, access, advisory): suite
 * "page-touch", benchmark "page_touch", sut "libxac", metric time_per_page
 * in microseconds, one sample per repetition = the whole xbegin..xend
 * (commit included) divided by n.
 *
 * The same run measures the operating-system floor on the kind of memory
 * LIBXAC uses for the segment (a shared mapping of a memfd; param
 * memory "memfd_shared"),
 * as sut "os" results over --max-pages consecutive pages:
 *   sigsegv_roundtrip  a read fault whose handler only steps over the
 *                      faulting instruction (x86-64 only)
 *   sigsegv_mprotect   a read fault whose handler grants PROT_READ with
 *                      one mprotect, as LIBXAC's does
 *   mprotect           one mprotect(PROT_READ) of one page
 * Issue B's targets compare page_touch at n = 1024 with sigsegv_mprotect.
 *
 * --durability nondurable | durable | both (default nondurable) chooses
 * xInit's flag; durable runs also measure, as sut "os" benchmark
 * "fdatasync" metric "time" (us), one append of a 128-byte record (the
 * size of a one-page commit record) to a log file followed by fdatasync:
 * the floor for a durable commit, and then benchmark "durable_commit":
 * a one-page durable commit and the raw append + fdatasync alternated in
 * one loop, with their per-pair ratio (metric "ratio_to_fdatasync",
 * issue C's target).  For each (advisory, durability, access)
 * the program fits T(n) = c + a*n (reads) or c + b*n (writes) by least
 * squares over the samples of the whole-transaction time T (us), weighted
 * 1/n^2, less those far from their n's median (see emit_fit): results
 * benchmark "fit", metrics "c", "a" or "b" (us) and "r2" (unit "1").  LIBXAC results also record access_control:
 * "pte" (page-table access, docs/libxac.md) or "mprotect" (XAC_PTE=0, or a
 * kernel without it).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <math.h>

#include "clock.h"
#include "fit.h"
#include "options.h"
#include "result.h"
#include "scratch.h"
#include "xac.h"

static size_t psize;

/* ---- the operating-system floor ---------------------------------------- */

static volatile int floor_mode; /* 0: step over the load, 1: mprotect */

static void floor_handler(int sig, siginfo_t *si, void *ucv)
{
    (void)sig;
    if (floor_mode == 1) {
        char *pg = (char *)((uintptr_t)si->si_addr & ~(uintptr_t)(psize - 1));
        if (mprotect(pg, psize, PROT_READ) != 0)
            abort();
        return;
    }
#if defined(__x86_64__)
    ((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP] += 2; /* mov (%rdi),%eax */
#else
    (void)ucv;
    abort();
#endif
}

/* A 32-bit load the handler can step over: "mov (%rdi), %eax" is 2 bytes. */
static int load_stepped(const int *p)
{
#if defined(__x86_64__)
    int v = 0;
    __asm__ volatile("movl (%%rdi), %%eax" : "=a"(v) : "D"(p) : "memory");
    return v;
#else
    return *(volatile const int *)p;
#endif
}

static void floors(int fd, size_t npg, long reps)
{
    struct sigaction sa, old;
    char *m;
    xb_result *rt, *sm, *mp;
    uint64_t t0;
    size_t i;
    long r;
    volatile int sink = 0;
    int have_rt = 0, mfd;

#if defined(__x86_64__)
    have_rt = 1;
#endif
    /* The kind of memory LIBXAC's segment is: a shared mapping of a memfd
     * whose pages exist (libxac/src/xac_fault.c), filled from the file. */
    mfd = memfd_create("page_touch-floor", MFD_CLOEXEC);
    if (mfd < 0 || ftruncate(mfd, (off_t)(npg * psize)) != 0)
        xb_die_errno("memfd");
    m = mmap(NULL, npg * psize, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_NORESERVE, mfd, 0);
    if (m == MAP_FAILED)
        xb_die_errno("mmap");
    if (pread(fd, m, npg * psize, 0) != (ssize_t)(npg * psize))
        xb_die_errno("pread");
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = floor_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &old) != 0)
        xb_die_errno("sigaction");

    rt = xb_result_new("page-touch", "sigsegv_roundtrip", "os",
                       "time_per_page", "us", XB_LOWER);
    sm = xb_result_new("page-touch", "sigsegv_mprotect", "os",
                       "time_per_page", "us", XB_LOWER);
    mp = xb_result_new("page-touch", "mprotect", "os", "time_per_page", "us",
                       XB_LOWER);
    for (r = -1; r < reps; r++) { /* r = -1 warms up */
        if (have_rt) {
            floor_mode = 0;
            if (mprotect(m, npg * psize, PROT_NONE) != 0)
                xb_die_errno("mprotect");
            t0 = xb_now_ns();
            for (i = 0; i < npg; i++)
                sink += load_stepped((const int *)(m + i * psize));
            if (r >= 0)
                xb_sample(rt, (double)(xb_now_ns() - t0) / 1e3 / (double)npg);
        }

        floor_mode = 1;
        if (mprotect(m, npg * psize, PROT_NONE) != 0)
            xb_die_errno("mprotect");
        t0 = xb_now_ns();
        for (i = 0; i < npg; i++)
            sink += *(volatile char *)(m + i * psize);
        if (r >= 0)
            xb_sample(sm, (double)(xb_now_ns() - t0) / 1e3 / (double)npg);

        if (mprotect(m, npg * psize, PROT_NONE) != 0)
            xb_die_errno("mprotect");
        t0 = xb_now_ns();
        for (i = 0; i < npg; i++)
            if (mprotect(m + i * psize, psize, PROT_READ) != 0)
                xb_die_errno("mprotect");
        if (r >= 0)
            xb_sample(mp, (double)(xb_now_ns() - t0) / 1e3 / (double)npg);
    }
    if (sigaction(SIGSEGV, &old, NULL) != 0)
        xb_die_errno("sigaction");
    munmap(m, npg * psize);
    close(mfd);

    xb_result *all[3] = {rt, sm, mp};
    for (i = 0; i < 3; i++) {
        xb_param_int(all[i], "n", (long long)npg);
        xb_param_str(all[i], "memory", "memfd_shared");
        if (all[i] == rt && !have_rt)
            xb_result_free(rt);
        else
            xb_result_emit(all[i]);
    }
    (void)sink;
}

/* ---- the page-touch transactions (figures 4-1 and 4-3) ------------------ */

/* One transaction over n pages; returns its time in nanoseconds. */
static uint64_t touch(int *x, int n, int write, int advisory)
{
    size_t ipp = psize / sizeof(int);
    volatile int value = 0;
    uint64_t t0 = xb_now_ns();
    int i, rc;

    xbegin();
    for (i = 0; i < n; i++) {
        size_t j = (size_t)i * ipp;
        if (advisory)
            setPageAccess(&x[j], write ? READ_WRITE : READ);
        if (write)
            x[j] = i;
        else
            value = x[j];
    }
    rc = xend();
    t0 = xb_now_ns() - t0;
    if (rc != COMMITTED) {
        fprintf(stderr, "page_touch: xend: %s\n", xStrerror(rc));
        exit(1);
    }
    (void)value;
    return t0;
}

/* The floor of a durable commit: append a record of the size of a
 * one-page commit record to a log file and fdatasync it. */
#define FLOOR_REC 128

static int floor_log(const char *scratch, const char *name, char *path,
                     size_t len)
{
    int fd;

    xb_path(path, len, scratch, name);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0666);
    if (fd < 0)
        xb_die_errno(path);
    return fd;
}

/* One append + fdatasync at *off; returns its time in nanoseconds. */
static uint64_t timed_append(int fd, off_t *off)
{
    char rec[FLOOR_REC];
    uint64_t t0;

    memset(rec, 0x5a, sizeof rec);
    t0 = xb_now_ns();
    if (pwrite(fd, rec, sizeof rec, *off) != (ssize_t)sizeof rec ||
        fdatasync(fd) != 0)
        xb_die_errno("fdatasync floor");
    t0 = xb_now_ns() - t0;
    *off += (off_t)sizeof rec;
    return t0;
}

static void fsync_floor(const char *scratch, long reps)
{
    char path[4096];
    xb_result *r;
    uint64_t t0;
    off_t off = 0;
    long k;
    int fd = floor_log(scratch, "floor.log", path, sizeof path);

    r = xb_result_new("page-touch", "fdatasync", "os", "time", "us",
                      XB_LOWER);
    for (k = -1; k < reps; k++) {
        t0 = timed_append(fd, &off);
        if (k >= 0)
            xb_sample(r, (double)t0 / 1e3);
    }
    xb_param_int(r, "bytes", FLOOR_REC);
    xb_result_emit(r);
    close(fd);
    unlink(path);
}

/* Issue C's ratio, measured side by side: each repetition times one raw
 * append + fdatasync (as fsync_floor) and then one durable commit that
 * writes one page (advisory, so no fault is timed), alternating, so both
 * see the same disk at the same moment.  Emits both series and the
 * per-pair ratio commit / raw (benchmark "durable_commit"). */
static void commit_vs_floor(int *x, const char *scratch, long reps)
{
    char path[4096];
    xb_result *raw, *commit, *ratio;
    uint64_t t0, t1;
    off_t off = 0;
    long k;
    int fd = floor_log(scratch, "pair.log", path, sizeof path);

    raw = xb_result_new("page-touch", "durable_commit", "os", "time", "us",
                        XB_LOWER);
    commit = xb_result_new("page-touch", "durable_commit", "libxac", "time",
                           "us", XB_LOWER);
    ratio = xb_result_new("page-touch", "durable_commit", "libxac",
                          "ratio_to_fdatasync", "ratio", XB_LOWER);
    for (k = -1; k < reps; k++) {
        t0 = timed_append(fd, &off);
        t1 = touch(x, 1, 1, 1);
        if (k < 0)
            continue; /* warm-up pair */
        xb_sample(raw, (double)t0 / 1e3);
        xb_sample(commit, (double)t1 / 1e3);
        xb_sample(ratio, (double)t1 / (double)(t0 ? t0 : 1));
    }
    xb_param_int(raw, "bytes", FLOOR_REC);
    xb_param_int(commit, "n", 1);
    xb_param_int(ratio, "n", 1);
    xb_result_emit(raw);
    xb_result_emit(commit);
    xb_result_emit(ratio);
    close(fd);
    unlink(path);
}

/* How the mapped segment grants access (xStats): recorded with each
 * result, since a and b depend on it. */
static const char *access_control(void)
{
    struct xac_stats st;

    return xStats(&st) == 0 && st.page_table_access ? "pte" : "mprotect";
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The median of v[0..k) (k > 0); sorts scratch, a copy of v. */
static double median_of(const double *v, size_t k, double *scratch)
{
    memcpy(scratch, v, k * sizeof *v);
    qsort(scratch, k, sizeof *scratch, cmp_double);
    return k % 2 ? scratch[k / 2] : (scratch[k / 2 - 1] + scratch[k / 2]) / 2;
}

/* Leaves out of per[] (and inv[] beside it) the samples more than
 * TYPICAL_SD robust standard deviations (1.4826 x the median absolute
 * deviation) from the median of their n; returns how many are kept.  A
 * transaction the scheduler preempted, or one that met a timer interrupt,
 * takes several times as long as its neighbours: left in, one such
 * sample at n = 1 or 2 moved c by a third and r2 from 0.3 to 0.9 from one
 * quick run to the next.  Robust run-to-run noise over 15 quick runs on a
 * quiet machine: c 9-27 % -> 3-7 %, r2 24-78 % -> 1-8 %, a and b 2-4 % ->
 * 1-2 % (and 3-6 % lower; docs/change-points.md has a noisy hour too).
 * Samples of one n are consecutive, as touch() took them. */
#define TYPICAL_SD 3.0
static size_t keep_typical(double *inv, double *per, size_t k)
{
    double *scratch = malloc(2 * k * sizeof *scratch); /* deviations, sorted copy */
    size_t from = 0, kept = 0;

    if (scratch == NULL)
        xb_die_errno("malloc");
    while (from < k) {
        size_t to = from, j;
        double mid, mad;

        while (to < k && inv[to] == inv[from])
            to++;
        mid = median_of(per + from, to - from, scratch);
        for (j = from; j < to; j++)
            scratch[j - from] = fabs(per[j] - mid);
        mad = median_of(scratch, to - from, scratch + (to - from));
        for (j = from; j < to; j++) {
            if (fabs(per[j] - mid) > TYPICAL_SD * 1.4826 * mad)
                continue;
            inv[kept] = inv[j];
            per[kept] = per[j];
            kept++;
        }
        from = to;
    }
    free(scratch);
    return kept;
}

/* Fit T(n) = c + slope*n over the typical samples (keep_typical) and emit
 * c, slope, r2.  n runs 1 .. 1024 geometrically and the spread of T grows
 * with n, so an unweighted fit of T on n would let the n = 1024 points
 * decide c.  The fit is done as T/n = slope + c * (1/n), i.e. weighted
 * least squares with weights 1/n^2 (equal relative errors), the per-page
 * form the thesis plots; r2 is that fit's. */
static void emit_fit(const double *n, const double *t, size_t k, int adv,
                     int durable, int write)
{
    struct xb_fit f;
    const char *names[3] = {"c", write ? "b" : "a", "r2"};
    double v[3], *inv, *per;
    size_t j;
    int i, rc;

    if (k < 3)
        return;
    inv = malloc(k * sizeof *inv);
    per = malloc(k * sizeof *per);
    if (inv == NULL || per == NULL)
        xb_die_errno("malloc");
    for (j = 0; j < k; j++) {
        inv[j] = 1.0 / n[j];
        per[j] = t[j] / n[j];
    }
    rc = xb_fit_line(inv, per, keep_typical(inv, per, k), &f);
    free(inv);
    free(per);
    if (rc != 0)
        return;
    v[0] = f.coef[1];
    v[1] = f.coef[0];
    v[2] = f.r2;
    for (i = 0; i < 3; i++) {
        xb_result *r;
        if (!isfinite(v[i]))
            continue;
        r = xb_result_new("page-touch", "fit", "libxac", names[i],
                          i == 2 ? "1" : "us",
                          i == 2 ? XB_HIGHER : XB_LOWER);
        xb_sample(r, v[i]);
        xb_param_bool(r, "advisory", adv);
        xb_param_str(r, "durability", durable ? "durable" : "nondurable");
        xb_param_str(r, "access", write ? "write" : "read");
        xb_param_str(r, "access_control", access_control());
        xb_result_emit(r);
    }
}

int main(int argc, char **argv)
{
    static const char *const durs[] = {"nondurable", "durable", "both",
                                       NULL};
    const char *dur = "nondurable";
    long long reps = -1, max_pages = 1024;
    int quick = 0;
    const char *dir = NULL, *scratch;
    char ctl[4096], data[4096];
    struct xb_opt opts[] = {
        {"quick", XB_OPT_FLAG, &quick, 0, 0, NULL,
         "25 repetitions per point instead of 100 (under 10 s)"},
        {"reps", XB_OPT_INT, &reps, 1, 1000000, NULL,
         "transactions timed for each point (default 25 quick, 100 full)"},
        {"max-pages", XB_OPT_INT, &max_pages, 1, 1 << 20, NULL,
         "largest n; n doubles from 1 up to it (default 1024)"},
        {"dir", XB_OPT_STR, &dir, 0, 0, NULL,
         "where to make the scratch directory (default $TMPDIR)"},
        {"durability", XB_OPT_CHOICE, &dur, 0, 0, durs,
         "nondurable (default), durable, or both"},
        {0}};
    int *x, nsteps = 0, step = 0, access, adv, fd, rc, d, d0, d1;
    double *fn, *ft;
    size_t fk[2][2], cap;
    long long n, r;
    char *buf;
    size_t i;

    xb_opts_parse(argc, argv,
                  "page_touch: thesis figures 4-1/4-3, time per page for "
                  "transactions that read or write n consecutive pages",
                  opts);
    if (reps < 0)
        /* Quick: 25, not 5 as before; the median of 5 scattered by 2-7 %
         * from run to run on a quiet machine, too much to see a 5 % change
         * in a series of runs (docs/change-points.md), and 25 take under
         * a second. */
        reps = quick ? 25 : 100;
    psize = (size_t)sysconf(_SC_PAGESIZE);
    scratch = xb_scratch_create(dir, "page_touch");
    xb_path(ctl, sizeof ctl, scratch, "xac");
    xb_path(data, sizeof data, scratch, "input.db");

    /* A real file, not a sparse one: every page is in the page cache. */
    fd = open(data, O_RDWR | O_CREAT | O_TRUNC, 0666);
    if (fd < 0)
        xb_die_errno(data);
    buf = malloc(psize);
    if (buf == NULL)
        xb_die_errno("malloc");
    memset(buf, 0x11, psize);
    for (i = 0; i < (size_t)max_pages; i++)
        if (pwrite(fd, buf, psize, (off_t)(i * psize)) != (ssize_t)psize)
            xb_die_errno("pwrite");
    free(buf);

    xb_progress(0.0, "measuring the OS floor");
    floors(fd, (size_t)max_pages, (long)reps);
    close(fd);

    d0 = strcmp(dur, "durable") == 0 ? 1 : 0;
    d1 = strcmp(dur, "nondurable") == 0 ? 0 : 1;
    if (d1 == 1)
        fsync_floor(scratch, (long)reps);
    for (n = 1; n <= max_pages; n *= 2)
        nsteps += 4 * (d1 - d0 + 1);
    cap = (size_t)(reps * 24);
    fn = malloc(4 * cap * sizeof *fn);
    ft = malloc(4 * cap * sizeof *ft);
    if (fn == NULL || ft == NULL)
        xb_die_errno("malloc");
    for (d = d0; d <= d1; d++) {
    rc = xInit(ctl, d ? DURABLE : NONDURABLE);
    if (rc != 0) {
        fprintf(stderr, "page_touch: xInit: %s\n", xStrerror(rc));
        return 1;
    }
    /* The thesis's per-page costs a and b: every transaction takes its
     * pages afresh (a process alone would otherwise keep them readable
     * from one repetition to the next, xSetKeepPages). */
    xSetKeepPages(0);
    x = xMmap(data, (size_t)max_pages * psize);
    if (x == MAP_FAILED)
        xb_die_errno("xMmap");
    memset(fk, 0, sizeof fk);
    for (n = 1; n <= max_pages; n *= 2) {
        for (access = 0; access < 2; access++) {
            for (adv = 0; adv < 2; adv++) {
                xb_result *res = xb_result_new("page-touch", "page_touch",
                                               "libxac", "time_per_page",
                                               "us", XB_LOWER);
                size_t slot = (size_t)(access * 2 + adv);
                xb_progress(0.05 + 0.95 * step / nsteps,
                            "%s n=%lld %s advisory=%s",
                            d ? "durable" : "nondurable", n,
                            access ? "write" : "read", adv ? "on" : "off");
                touch(x, (int)n, access, adv); /* warm-up */
                for (r = 0; r < reps; r++) {
                    double us = (double)touch(x, (int)n, access, adv) / 1e3;
                    xb_sample(res, us / (double)n);
                    if (fk[access][adv] < cap) {
                        fn[slot * cap + fk[access][adv]] = (double)n;
                        ft[slot * cap + fk[access][adv]] = us;
                        fk[access][adv]++;
                    }
                }
                xb_param_int(res, "n", n);
                xb_param_str(res, "access", access ? "write" : "read");
                xb_param_bool(res, "advisory", adv);
                xb_param_str(res, "durability",
                             d ? "durable" : "nondurable");
                xb_param_str(res, "access_control", access_control());
                xb_result_emit(res);
                step++;
            }
        }
    }
    for (access = 0; access < 2; access++)
        for (adv = 0; adv < 2; adv++)
            emit_fit(fn + (size_t)(access * 2 + adv) * cap,
                     ft + (size_t)(access * 2 + adv) * cap,
                     fk[access][adv], adv, d, access);
    if (d == 1) {
        xb_progress(0.99, "durable commit beside raw fdatasync");
        commit_vs_floor(x, scratch, (long)reps);
    }
    rc = xShutdown();
    if (rc != 0) {
        fprintf(stderr, "page_touch: xShutdown: %s\n", xStrerror(rc));
        return 1;
    }
    }
    free(fn);
    free(ft);
    xb_progress(1.0, "done");
    return 0;
}
