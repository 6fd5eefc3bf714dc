/* process.c: crash points by SIGKILL (crash.h, docs/crash-consistency.md). */
#include "crash.h"

#include "clock.h"
#include "scratch.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define READY_MARK UINT64_MAX
#define MAX_ACKS_BEFORE_KILL 6

/* The committing child: open, say ready, insert keys[next..] one
 * transaction each and write each index after its insert returned. */
static void committer(const struct xc_run *run, const char *dir, size_t next,
                      int out)
{
    const struct xb_kv_store *st = run->st;
    void *h;
    unsigned char v[XB_KV_MAX_VALUE];
    if (st->open(run->cfg, dir, XB_KV_MEASURE, &h) != 0)
        _exit(3);
    uint64_t mark = READY_MARK;
    if (write(out, &mark, sizeof mark) != (ssize_t)sizeof mark)
        _exit(4);
    for (size_t i = next; i < run->nkeys; i++) {
        struct xb_kv_key key = {run->keys[i], {0}};
        xb_key_encode(key.n, key.bytes);
        xb_workload_value(key.n, v, run->cfg->value_bytes);
        if (st->insert(h, &key, v, run->cfg->value_bytes) != 0)
            _exit(5);
        mark = i;
        if (write(out, &mark, sizeof mark) != (ssize_t)sizeof mark)
            _exit(4);
    }
    _exit(0); /* ran out of keys before the kill: the parent still checks */
}

static int read_mark(int fd, uint64_t *mark)
{
    size_t got = 0;
    while (got < sizeof *mark) {
        ssize_t r = read(fd, (char *)mark + got, sizeof *mark - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0;
        got += (size_t)r;
    }
    return 1;
}

static void sleep_us(double us)
{
    struct timespec ts = {(time_t)(us / 1e6),
                          (long)((us - (double)(time_t)(us / 1e6) * 1e6) *
                                 1e3)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* One crash point: start the committer at key index next, kill it, and
 * mark in expect what it acknowledged.  Returns the index of the key in
 * flight (the first not acknowledged), or -1 if the child never became
 * ready (said in *why). */
static long long crash_once(const struct xc_run *run, const char *dir,
                            size_t next, struct xb_rng *rng,
                            double *commit_us, unsigned char *expect,
                            char *why, size_t len)
{
    int fd[2];
    if (pipe(fd) != 0)
        xb_die_errno("pipe");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        xb_die_errno("fork");
    if (pid == 0) {
        close(fd[0]);
        committer(run, dir, next, fd[1]);
    }
    close(fd[1]);
    uint64_t mark;
    long long acked = 0, target = (long long)xb_rng_below(
                             rng, MAX_ACKS_BEFORE_KILL + 1);
    size_t in_flight = next;
    int ready = read_mark(fd[0], &mark) && mark == READY_MARK;
    uint64_t t0 = xb_now_ns();
    while (ready && acked < target && read_mark(fd[0], &mark)) {
        expect[mark] = XC_PRESENT;
        in_flight = mark + 1;
        acked++;
    }
    if (ready && acked > 0)
        *commit_us = (double)(xb_now_ns() - t0) / 1e3 / (double)acked;
    /* Somewhere inside the next commit or two. */
    if (ready)
        sleep_us((double)xb_rng_below(rng, 1000) / 1000.0 * 2 * *commit_us);
    kill(pid, SIGKILL);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    while (ready && read_mark(fd[0], &mark)) { /* acks sent before it died */
        expect[mark] = XC_PRESENT;
        in_flight = mark + 1;
    }
    close(fd[0]);
    if (!ready) {
        snprintf(why, len, "the store did not reopen in a new process "
                 "after the last recovery (exit %d)",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return -1;
    }
    if (in_flight < run->nkeys)
        expect[in_flight] = XC_EITHER;
    return (long long)in_flight;
}

static void fresh_store(const struct xc_run *run, const char *dir)
{
    xb_remove_tree(dir);
    if (mkdir(dir, 0700) != 0)
        xb_die_errno("mkdir");
    if (run->st->create(run->cfg, dir) != 0) {
        fprintf(stderr, "%s: crash: cannot make the store.\n", run->st->prog);
        exit(1);
    }
}

int xc_process(const struct xc_run *run, struct xc_tally *t)
{
    char dir[4096], name[64];
    snprintf(name, sizeof name, "process-%d", run->cfg_index);
    xb_path(dir, sizeof dir, run->scratch, name);
    unsigned char *expect = calloc(run->nkeys, 1);
    if (expect == NULL)
        xb_die_errno("calloc");
    struct xb_rng rng;
    xb_rng_seed(&rng, run->seed ^ 0x70726f63ULL);
    double commit_us = 1000;
    size_t next = 0;
    for (long long p = 0; p < run->points; p++) {
        if (p % XC_ROUNDS == 0 || next + 2 * MAX_ACKS_BEFORE_KILL + 64 >
                                      run->nkeys) {
            fresh_store(run, dir);
            memset(expect, XC_ABSENT, run->nkeys);
            next = 0;
        }
        char why[256] = "";
        long long flight = crash_once(run, dir, next, &rng, &commit_us,
                                      expect, why, sizeof why);
        struct xc_check c;
        /* Check the keys so far and a few past the one in flight, which
         * must all be absent. */
        size_t upto = flight < 0 ? next : (size_t)flight + 3;
        if (upto > run->nkeys)
            upto = run->nkeys;
        if (xc_check_store(run, dir, expect, upto, &c) != 0)
            xb_die_errno("fork");
        if (flight < 0) {
            c.violations++;
            snprintf(c.why, sizeof c.why, "%s", why);
        }
        if (xc_tally_add(t, &c))
            fprintf(stderr, "%s: FINDING: process crash point %lld (%s): %s; "
                    "lost %lld, uncommitted visible %lld, violations %lld. "
                    "Reproduce: %s crash --kind process --seed %llu "
                    "--points %lld.\n", run->st->prog, p + 1,
                    run->cfg->mode, c.why, c.lost, c.uncommitted,
                    c.violations, run->st->prog,
                    (unsigned long long)run->seed, p + 1);
        if (flight < 0) { /* a store that cannot reopen: start again */
            next = run->nkeys;
            continue;
        }
        if ((size_t)flight < run->nkeys)
            expect[flight] = c.in_flight_present ? XC_PRESENT : XC_ABSENT;
        next = (size_t)flight + 1;
        if (p % 50 == 49)
            xb_progress((double)(p + 1) / (double)run->points,
                        "%s %s: process crash point %lld of %lld",
                        run->st->sut, run->cfg->mode, p + 1, run->points);
    }
    free(expect);
    return 0;
}
