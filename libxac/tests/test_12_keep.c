/* test_12_keep: pages kept between transactions (xSetKeepPages).  A
 * process alone keeps its pages readable; a write to a kept page still
 * faults; an abort revokes what it wrote; another process's commit, or a
 * process attaching in the middle of a transaction, revokes kept pages or
 * fails the transaction that may have read them. */
#include <string.h>
#include <unistd.h>

#include "support/testhelp.h"
#include "support/tutil.h"

#define NPG 8

static int p2c[2], c2p[2];
static int *x;
static int vg;

/* Under valgrind, accesses are declared first (tu_page).  Kept pages
 * need no fault either way. */
static int *pg(int n, int mode)
{
    return tu_page(x, n, mode, vg);
}

static int rd(int n)
{
    return tu_peek(x, n, vg);
}

/* Faults taken.  Under valgrind pages are declared (pg), which takes
 * none: there the count checks pass trivially and the values still
 * count. */
#define FAULT (vg ? 0u : 1u) /* one fault, as faults() counts them */

static unsigned long long faults(void)
{
    return vg ? 0 : tu_stats().faults;
}

/* A child that commits page n = v when told (tu_spawn_writer). */
static pid_t spawn_writer(int n, int v)
{
    return tu_spawn_writer(p2c[0], c2p[1], "k.db", NPG, n, v, vg);
}

int main(void)
{
    unsigned long long f;
    int a, b;
    pid_t pid;

    vg = tu_valgrind();
    tu_tmpdir();
    if (pipe(p2c) != 0 || pipe(c2p) != 0)
        abort();
    E(xInit("ctl", NONDURABLE));
    test_cond("keeping pages is on by default", xSetKeepPages(1) == 1);
    x = xMmap("k.db", NPG * PAGESIZE);
    test_cond("map", x != MAP_FAILED);

    /* Alone: the second transaction reads without faults. */
    E(xbegin());
    *pg(0, READ_WRITE) = 1;
    a = rd(1);
    test_cond("first transaction commits", xend() == COMMITTED && a == 0);
    test_cond("its two pages are kept", tu_stats().kept_pages == 2);
    f = faults();
    E(xbegin());
    a = rd(0);
    b = rd(1);
    test_cond("the next one reads them", xend() == COMMITTED && a == 1 &&
                                             b == 0);
    test_cond("... without a fault", faults() == f);

    /* A write to a kept page faults once, and commits. */
    E(xbegin());
    *pg(0, READ_WRITE) = 2;
    test_cond("a write to a kept page commits", xend() == COMMITTED);
    test_cond("... after one fault", faults() == f + FAULT);
    E(xbegin());
    a = rd(0);
    test_cond("the written page is kept with its new value",
              xend() == COMMITTED && a == 2 && faults() == f + FAULT);

    /* An abort revokes what it wrote. */
    E(xbegin());
    *pg(0, READ_WRITE) = 3;
    E(xFail());
    test_cond("a failed transaction aborts", xend() == ABORTED);
    f = faults();
    E(xbegin());
    a = rd(0);
    test_cond("its write is gone", xend() == COMMITTED && a == 2);
    test_cond("... and the page faulted back in", faults() == f + FAULT);

    /* Another process commits between two transactions. */
    pid = spawn_writer(1, 7);
    tu_tell(p2c[1], 'g');
    test_cond("another process commits page 1", tu_hear(c2p[0]) == 'd');
    test_cond("it exits cleanly", tu_reap(pid));
    E(xbegin());
    b = rd(1);
    test_cond("the kept page was revoked: the new value is read",
              xend() == COMMITTED && b == 7);

    /* A process attaches and commits in the middle of a transaction that
     * read a kept page without a fault. */
    E(xbegin());
    (void)rd(0);
    (void)rd(1);
    test_cond("pages kept again",
              xend() == COMMITTED && tu_stats().kept_pages >= 2);
    pid = spawn_writer(0, 9);
    f = faults();
    E(xbegin());
    a = rd(0);
    test_cond("a kept page read without a fault", faults() == f && a == 2);
    tu_tell(p2c[1], 'g');
    test_cond("another process commits page 0 meanwhile",
              tu_hear(c2p[0]) == 'd');
    test_cond("it exits cleanly again", tu_reap(pid));
    *pg(2, READ_WRITE) = 5;
    test_cond("the transaction that read the old page 0 fails",
              xValidate() == FAILED);
    test_cond("... and aborts", xend() == ABORTED);
    E(xbegin());
    a = rd(0);
    b = rd(2);
    test_cond("the retry reads the new page 0 and not its own write",
              xend() == COMMITTED && a == 9 && b == 0);

    /* Off: every transaction faults again. */
    E(xbegin());
    test_cond("xSetKeepPages inside a transaction is refused",
              xSetKeepPages(0) == XAC_EINTXN);
    test_cond("... and the transaction goes on", xend() == COMMITTED);
    test_cond("turning it off returns the old setting", xSetKeepPages(0) == 1);
    test_cond("... and revokes the kept pages", tu_stats().kept_pages == 0);
    E(xbegin());
    (void)rd(0);
    test_cond("commit", xend() == COMMITTED);
    f = faults();
    E(xbegin());
    a = rd(0);
    test_cond("with it off a page faults in every transaction",
              xend() == COMMITTED && a == 9 && faults() == f + FAULT);
    test_cond("nothing is kept", tu_stats().kept_pages == 0);
    E(xSetKeepPages(1) == 0 ? 0 : -1);

    /* What reached the file. */
    E(xbegin());
    *pg(3, READ_WRITE) = 11;
    test_cond("a last commit", xend() == COMMITTED);
    E(xMunmap("k.db"));
    test_cond("page 0 in the file", tu_int_at("k.db", 0) == 9);
    test_cond("page 1 in the file", tu_int_at("k.db", PAGESIZE) == 7);
    test_cond("page 2 (an aborted write) in the file",
              tu_int_at("k.db", 2 * PAGESIZE) == 0);
    test_cond("page 3 in the file", tu_int_at("k.db", 3 * PAGESIZE) == 11);
    E(xShutdown());
    test_cond("xSetKeepPages before xInit", xSetKeepPages(1) == XAC_ENOTINIT);

    /* A working memory of 1 MiB: past it, the process empties it and
     * revokes its kept pages; the values survive in the file. */
    setenv("XAC_WORKING_MIB", "1", 1);
    E(xInit("ctl", NONDURABLE));
    unsetenv("XAC_WORKING_MIB");
    {
        size_t n = (2u << 20) / PAGESIZE, i;
        int ok = 1;
        x = xMmap("w.db", n * PAGESIZE);
        test_cond("map 2 MiB", x != MAP_FAILED);
        E(xbegin());
        for (i = 0; i < n / 4; i++)
            *pg((int)i, READ_WRITE) = (int)i + 1;
        test_cond("a quarter of it written", xend() == COMMITTED);
        test_cond("... and kept", tu_stats().kept_pages == n / 4);
        E(xbegin());
        for (i = 0; i < n; i++)
            *pg((int)i, READ_WRITE) += 1000;
        test_cond("all of it written", xend() == COMMITTED);
        test_cond("past 1 MiB of copies nothing is kept",
                  tu_stats().kept_pages == 0);
        E(xbegin());
        for (i = 0; i < n; i++)
            ok = ok && rd((int)i) == (int)(i < n / 4 ? i + 1 : 0) + 1000;
        test_cond("every value is read back", xend() == COMMITTED && ok);
        E(xMunmap("w.db"));
    }
    E(xShutdown());
    return test_report();
}
