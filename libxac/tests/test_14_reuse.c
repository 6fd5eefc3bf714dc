/* test_14_reuse: a fault copies nothing when the working memory still
 * holds the page's version.
 *
 * With pages not kept (xSetKeepPages(0), or another process attached),
 * every transaction's first touch of a page faults, and the fault copies
 * the page's snapshot version into the working memory (xac_fault.c,
 * load).  If the newest committed version is in the snapshot and is the
 * one the working memory got last time (loaded, or written by this
 * process's own commit), the copy is skipped.  It must not be skipped
 * after an abort of a transaction that wrote the page, after another
 * process committed the page, or after the working memory was emptied
 * (XAC_WORKING_MIB).  XAC_REUSE=0 turns the skipping off.  Reads of the
 * data file are counted through the OS table; xStats' pages_reused counts
 * the skips, and pages_copied the copies: one for each read here.
 * pages_new counts the copies into a page the working memory did not have
 * yet: a page's first copy, and its first after the memory was emptied.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_os.h"

#define NPG 300 /* more than XAC_WORKING_MIB=1 holds (256 pages) */

static int p2c[2], c2p[2];
static int *x;
static int vg;
static unsigned nread;
static unsigned long long copied0; /* xStats counts from the first xInit */
static unsigned long long new0;

static ssize_t count_pread(int fd, void *buf, size_t n, off_t off)
{
    nread++;
    return pread(fd, buf, n, off);
}

static int *pg(int n, int mode)
{
    return tu_page(x, n, mode, vg);
}

/* Copies into pages the working memory did not have, since attach(). */
static unsigned long long news(void)
{
    return tu_stats().pages_new - new0;
}

/* Every read of a page's version is one page copied, and nothing else. */
static int copies_are_reads(void)
{
    return tu_stats().pages_copied - copied0 == nread;
}

static int rd(int n)
{
    return tu_peek(x, n, vg);
}

/* A child that commits page n = v when told (tu_spawn_writer). */
static pid_t spawn_writer(int n, int v)
{
    return tu_spawn_writer(p2c[0], c2p[1], "r.db", NPG, n, v, vg);
}

/* Attach with pages not kept, and count reads from then on. */
static int *attach(void)
{
    int *y;

    E(xInit("ctl", NONDURABLE));
    xSetKeepPages(0);
    y = xMmap("r.db", NPG * PAGESIZE);
    nread = 0;
    copied0 = tu_stats().pages_copied;
    new0 = tu_stats().pages_new;
    xos.pread = count_pread;
    return y;
}

int main(void)
{
    unsigned long long r;
    unsigned n;
    int a, b, sum;
    pid_t pid;

    vg = tu_valgrind();
    tu_tmpdir();
    if (pipe(p2c) != 0 || pipe(c2p) != 0 ||
        setenv("XAC_WORKING_MIB", "1", 1) != 0)
        abort();
    x = attach();
    test_cond("map", x != MAP_FAILED);

    /* Our own commit names what we wrote. */
    E(xbegin());
    *pg(0, READ_WRITE) = 1;
    *pg(1, READ_WRITE) = 2;
    test_cond("a commit writes pages 0 and 1", xend() == COMMITTED);
    test_cond("... each copied into a new page of the working memory",
              news() == 2 && copies_are_reads());
    n = nread;
    r = tu_stats().pages_reused;
    E(xbegin());
    a = rd(0);
    b = rd(1);
    test_cond("the next transaction reads them", xend() == COMMITTED &&
                                                     a == 1 && b == 2);
    test_cond("... from the working memory: no read, two reuses",
              nread == n && tu_stats().pages_reused == r + 2);
    test_cond("... and no copy", copies_are_reads());

    /* A page loaded once is not loaded again. */
    E(xbegin());
    a = rd(2);
    test_cond("a page never touched is read from the file",
              xend() == COMMITTED && a == 0 && nread == n + 1);
    test_cond("... one page copied", nread > 0 && copies_are_reads());
    test_cond("... into a new page", news() == 3);
    E(xbegin());
    a = rd(2);
    test_cond("... and reused the next time",
              xend() == COMMITTED && a == 0 && nread == n + 1 &&
                  tu_stats().pages_reused == r + 3);

    /* An abort leaves its writes in the working memory: never reused. */
    E(xbegin());
    *pg(0, READ_WRITE) = 99;
    E(xFail());
    test_cond("a transaction that wrote page 0 aborts", xend() == ABORTED);
    n = nread;
    E(xbegin());
    a = rd(0);
    test_cond("page 0 is read again, with its committed value",
              xend() == COMMITTED && a == 1 && nread == n + 1);
    test_cond("... into the page the working memory has", news() == 3);

    /* Another process commits a page we hold. */
    E(xbegin());
    (void)rd(1);
    test_cond("page 1 held", xend() == COMMITTED);
    pid = spawn_writer(1, 7);
    tu_tell(p2c[1], 'g');
    test_cond("another process commits page 1", tu_hear(c2p[0]) == 'd');
    test_cond("it exits cleanly", tu_reap(pid));
    n = nread;
    r = tu_stats().pages_reused;
    E(xbegin());
    b = rd(1);
    a = rd(0);
    test_cond("its version of page 1 is read, page 0 is reused",
              xend() == COMMITTED && b == 7 && a == 1 && nread == n + 1 &&
                  tu_stats().pages_reused == r + 1);
    test_cond("... so one more page copied", copies_are_reads());
    test_cond("... into the page it had", news() == 3);

    /* Emptying the working memory forgets what it held. */
    E(xbegin());
    sum = 0;
    for (int i = 0; i < NPG; i++)
        sum += rd(i);
    test_cond("a transaction reads all 300 pages (over XAC_WORKING_MIB)",
              xend() == COMMITTED && sum == 1 + 7);
    test_cond("... 297 of them new to the working memory", news() == 300);
    n = nread;
    r = tu_stats().pages_reused;
    new0 = tu_stats().pages_new;
    E(xbegin());
    a = rd(0);
    b = rd(1);
    test_cond("after the working memory was emptied, pages are read again",
              xend() == COMMITTED && a == 1 && b == 7 && nread == n + 2 &&
                  tu_stats().pages_reused == r);
    test_cond("... and copied again", copies_are_reads());
    test_cond("... into new pages: the memory was emptied", news() == 2);

    xos_reset();
    E(xMunmap("r.db"));
    test_cond("the file holds the committed values",
              tu_int_at("r.db", 0) == 1 && tu_int_at("r.db", PAGESIZE) == 7);
    E(xShutdown());

    /* XAC_REUSE=0 copies every time; other values are refused. */
    setenv("XAC_REUSE", "2", 1);
    test_cond("XAC_REUSE=2 is refused",
              xInit("ctl", NONDURABLE) == XAC_EINVAL);
    setenv("XAC_REUSE", "0", 1);
    x = attach();
    test_cond("map with XAC_REUSE=0", x != MAP_FAILED);
    E(xbegin());
    a = rd(0);
    test_cond("page 0 read once", xend() == COMMITTED && a == 1);
    n = nread;
    r = tu_stats().pages_reused;
    E(xbegin());
    a = rd(0);
    test_cond("with XAC_REUSE=0 it is read from the file again",
              xend() == COMMITTED && a == 1 && nread == n + 1 &&
                  tu_stats().pages_reused == r);
    test_cond("... and copied each time", nread == 2 && copies_are_reads());
    test_cond("... the second time into the page it had", news() == 1);
    xos_reset();
    E(xMunmap("r.db"));
    E(xShutdown());
    unsetenv("XAC_REUSE");
    return test_report();
}
