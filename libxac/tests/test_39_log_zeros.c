/* test_39_log_zeros: the durable log is written with zeros ahead of its
 * tail a chunk at a time, under the commit's lock but without a sync of
 * its own (xac_logfile.c, xlf_alloc).  Growing the log by a step adds no
 * sync to any commit, the zeroed front stays ahead of the tail, the bytes
 * between them are zeros, a record longer than the zeros ahead lands
 * whole, and recovery reads the zeros as the end of the log. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_ctl.h"
#include "xac_os.h"

#define NP 1024          /* 4 MiB of data file */
#define WIDE 4           /* pages each commit rewrites */
#define COMMITS 300      /* at WIDE pages, about 4.8 MB of log */
#define BIG 600          /* pages of the one large record (2.4 MB) */
#define AHEAD (1u << 20) /* XLOG_ZERO_AHEAD */
#define CHUNK (64u << 10) /* XLOG_ZERO_CHUNK */

static int nsync;
static int count_sync(int fd)
{
    nsync++;
    return fdatasync(fd);
}

/* Rewrite pages [first, first + n) whole with byte v (every byte changes,
 * so the record carries them all). */
static int rewrite(char *x, int first, int n, int v)
{
    int rc;

    do {
        if (xbegin() != 0)
            return -1;
        for (int p = first; p < first + n; p++) {
            char *page = x + (size_t)p * PAGESIZE;
            setPageAccess(page, READ_WRITE);
            memset(page, v, PAGESIZE);
        }
        rc = xend();
    } while (rc == ABORTED);
    return rc;
}

static struct xctl_hdr header(void)
{
    struct xctl_hdr h;

    if (tu_read("ctl/xac.ctl", &h, sizeof h, 0) != (ssize_t)sizeof h)
        abort();
    return h;
}

/* Are the bytes [from, to) of log file fno all zero? */
static int zeros_between(uint32_t fno, uint64_t from, uint64_t to)
{
    char path[64], buf[65536];
    uint64_t at = from;

    snprintf(path, sizeof path, "ctl/xac.log.%010u", fno);
    while (at < to) {
        size_t n = to - at < sizeof buf ? (size_t)(to - at) : sizeof buf;
        if (tu_read(path, buf, n, (off_t)at) != (ssize_t)n)
            return 0;
        for (size_t i = 0; i < n; i++)
            if (buf[i] != 0)
                return 0;
        at += n;
    }
    return 1;
}

/* The zeroed front is in the tail's file, ahead of the tail by no more
 * than one chunk past what a commit asks for, and zeros lie between. */
static int front_ahead(const char *what)
{
    struct xctl_hdr h = header();
    uint64_t tail = h.ch_log_tail, zeroed = h.ch_log_zeroed;
    uint32_t fno = (uint32_t)(tail >> 32);
    uint64_t t = tail & 0xffffffffu, z = zeroed & 0xffffffffu;
    int ok = (zeroed >> 32) == fno && z > t && z - t <= AHEAD + 2 * CHUNK &&
             zeros_between(fno, t, z);

    printf("# %s: tail %llu, zeros up to %llu (%llu ahead)\n", what,
           (unsigned long long)t, (unsigned long long)z,
           (unsigned long long)(z - t));
    return ok;
}

/* Attach (the mapping checked under the name mapped), then COMMITS commits of WIDE pages
 * (values from v on), the fdatasync calls counted in nsync.  1 if all
 * committed. */
static int commit_counting_syncs(const char *mapped, int v)
{
    char *x;
    int ok = 1;

    E(xInit("ctl", DURABLE));
    x = xMmap("d.db", (size_t)NP * PAGESIZE);
    test_cond(mapped, x != MAP_FAILED);
    if (x == MAP_FAILED)
        return 0;
    xos.fdatasync = count_sync;
    nsync = 0;
    for (int c = 0; c < COMMITS; c++)
        ok &= rewrite(x, (c * WIDE) % (NP - WIDE), WIDE, c + v) == COMMITTED;
    xos_reset();
    return ok;
}

static void big_then_die(void *arg)
{
    char *x;

    (void)arg;
    if (xInit("ctl", DURABLE) != 0)
        _exit(3);
    x = xMmap("d.db", (size_t)NP * PAGESIZE);
    if (x == MAP_FAILED)
        _exit(4);
    if (rewrite(x, 0, BIG, 0x5a) != COMMITTED)
        _exit(5);
    _exit(0); /* no xShutdown: recovery replays the record */
}

int main(void)
{
    char *x, *page;
    int ok, c, w;

    tu_tmpdir();
    /* The buffered path first: each lone commit is one fdatasync. */
    if (setenv("XAC_LOG_DIRECT", "0", 1) != 0)
        return 1;
    ok = commit_counting_syncs("xMmap", 1);
    printf("# %d commits of %d pages: %d syncs, %llu log bytes\n", COMMITS,
           WIDE, nsync, (unsigned long long)tu_stats().log_bytes);
    test_cond("every commit committed", ok);
    test_cond("the log grew past a 4 MiB step", tu_stats().log_bytes > 4u << 20);
    test_cond("growing the log added no sync: one fdatasync per commit",
              nsync == COMMITS);
    test_cond("the zeros run ahead of the tail (buffered commits)",
              front_ahead("buffered"));
    E(xShutdown());

    /* The alone commit's direct write: no fdatasync at all, even where
     * the log grows. */
    unsetenv("XAC_LOG_DIRECT");
    ok = commit_counting_syncs("xMmap again", 7);
    printf("# %d direct commits: %d fdatasyncs, %llu direct writes\n",
           COMMITS, nsync, (unsigned long long)tu_stats().log_direct_writes);
    test_cond("every direct commit committed", ok);
    test_cond("direct commits that grow the log sync nothing else",
              nsync == 0 && tu_stats().log_direct_writes >= COMMITS);
    test_cond("the zeros run ahead of the tail (direct commits)",
              front_ahead("direct"));
    E(xShutdown());

    /* A record longer than the zeros ahead of it, then a crash. */
    w = tu_in_child(big_then_die, NULL);
    test_cond("a child committed a 2.4 MB record and died",
              WIFEXITED(w) && WEXITSTATUS(w) == 0);
    E(xInit("ctl", DURABLE));
    x = xMmap("d.db", (size_t)NP * PAGESIZE);
    test_cond("recovery maps the file", x != MAP_FAILED);
    ok = tu_stats().recoveries >= 1;
    E(xbeginQuery());
    for (c = 0; c < BIG && ok; c++) {
        page = x + (size_t)c * PAGESIZE;
        setPageAccess(page, READ);
        ok = page[0] == 0x5a && page[PAGESIZE - 1] == 0x5a;
    }
    xendQuery();
    test_cond("recovery replayed the whole large record", ok);
    test_cond("after recovery the zeros run ahead again",
              rewrite(x, 0, 1, 1) == COMMITTED && front_ahead("recovered"));
    E(xShutdown());
    return test_report();
}
