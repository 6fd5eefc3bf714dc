/* test_36_queries: read-only transactions keep their pages while other
 * processes are attached, and take no fault on a page that no commit
 * changed since the process's previous snapshot; a page a commit changed
 * is revoked at the next xbegin (the change ring, xac_seg.h), also a page
 * only mapped around a fault (fault-around, xac_fault.c) and also when
 * the change fell out of the ring (then every kept page goes).  An update
 * transaction while others are attached starts with the pages kept
 * before it if they are at most XTX_KEEP_SHARED (64), less those commits
 * changed, and fails if a commit changes one of them before it commits
 * (it may have read it without a fault); with more kept it takes every
 * page afresh, unless nobody committed since they were kept (the others
 * only read): then it keeps them all.  Run under page-table access (fault-around on) and under
 * mprotect.
 *
 * A helper process stays attached and commits what the test tells it
 * (page and value down a pipe), so the test process is never alone.
 */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_seg.h"
#include "xac_txn.h"

#define NPG 200  /* the segment, in pages (a change ring of 1,024) */
#define READ_PG 100 /* the queries read pages [0, READ_PG) */
/* What the few-kept-pages steps add to the sum of [0, READ_PG). */
#define FEW_KEPT (1010 - 10 + 1111 - 11 + 1212 - 12 + 1313 - 13)

static int *x;
static int to_helper[2], from_helper[2];

/* The helper: commits "page value" lines (each answered with 'd', but
 * those of page 150, the ring's filler); "-2 v" begins an update
 * transaction writing page 190 and answers 'h', and the next line ends
 * it; "-1 0" ends the helper. */
static void helper(void)
{
    int *y, pg, v;
    FILE *in = fdopen(to_helper[0], "r");

    if (in == NULL || xInit("ctl", NONDURABLE) != 0)
        _exit(20);
    y = xMmap("q.db", NPG * PAGESIZE);
    if (y == MAP_FAILED)
        _exit(21);
    tu_tell(from_helper[1], 'r');
    while (fscanf(in, "%d %d", &pg, &v) == 2 && pg != -1) {
        if (pg == -2) {
            xbegin();
            y[(size_t)190 * tu_ipp()] = v;
            tu_tell(from_helper[1], 'h');
            if (fscanf(in, "%d %d", &pg, &v) != 2 || xend() != COMMITTED)
                _exit(22);
            tu_tell(from_helper[1], 'd');
            continue;
        }
        do {
            xbegin();
            y[(size_t)pg * tu_ipp()] = v;
        } while (xend() != COMMITTED);
        if (pg != 150)
            tu_tell(from_helper[1], 'd');
    }
    xMunmap("q.db");
    xShutdown();
    _exit(0);
}

/* Have the helper commit page pg = v (n times, the last answered). */
static int helper_commits(int pg, int v)
{
    char line[64];
    int len = snprintf(line, sizeof line, "%d %d\n", pg, v);

    return write(to_helper[1], line, (size_t)len) == len &&
           (pg == 150 || tu_hear(from_helper[0]) == 'd');
}

/* One query over pages [0, READ_PG): the sum of their first ints, and
 * the faults it took. */
static long query(unsigned long long *faults)
{
    unsigned long long f0 = tu_stats().faults;
    long sum = 0;
    int i;

    E(xbeginQuery());
    for (i = 0; i < READ_PG; i++)
        sum += tu_peek(x, i, 0);
    if (xendQuery() != COMMITTED)
        abort();
    *faults = tu_stats().faults - f0;
    return sum;
}

/* The sum the first ints of [0, READ_PG) hold after setup: 0 + 1 + ... */
static long base_sum(void)
{
    return (long)READ_PG * (READ_PG - 1) / 2;
}

static void run(int pte)
{
    unsigned long long f;
    long s;
    pid_t pid;
    int i, ring, around;

    printf("# %s\n", pte ? "page-table access" : "mprotect");
    setenv("XAC_PTE", pte ? "1" : "0", 1);
    setenv("XAC_WRITERS", "1", 1);
    E(xInit("ctl", NONDURABLE));
    x = xMmap("q.db", NPG * PAGESIZE);
    if (x == MAP_FAILED)
        abort();
    E(xbegin());
    for (i = 0; i < NPG; i++)
        *tu_page(x, i, READ_WRITE, 0) = i;
    test_cond("the pages are numbered", xend() == COMMITTED);
    if (pipe(to_helper) != 0 || pipe(from_helper) != 0)
        abort();
    fflush(NULL);
    pid = fork();
    if (pid == 0)
        helper();
    test_cond("a second process is attached",
              tu_hear(from_helper[0]) == 'r');
    around = pte && tu_stats().page_table_access;
    /* The 200 pages the numbering kept (alone, then) stay while the
     * other process has committed nothing: none of them can have changed
     * (it only reads, as a search beside one writer). */
    f = tu_stats().faults;
    E(xbegin());
    i = tu_peek(x, 199, 0);
    test_cond("an update transaction while the other process has committed "
              "nothing reads a kept page without a fault",
              xend() == COMMITTED && i == 199 && tu_stats().faults == f);
    test_cond("and keeps all 200 pages", tu_stats().kept_pages == NPG);
    /* They go at the next update transaction once it has committed. */
    test_cond("the helper commits page 180", helper_commits(180, 1800));
    E(xbegin());
    i = tu_peek(x, 199, 0);
    test_cond("an update transaction reads a page", xend() == COMMITTED &&
                                                        i == 199);
    test_cond("and keeps only that page", NPG > XTX_KEEP_SHARED &&
                                              tu_stats().kept_pages == 1);

    s = query(&f);
    test_cond("the first query reads every page", s == base_sum() && f > 0);
    if (around)
        test_cond("under page-table access one fault maps the pages around "
                  "it (copied, or from the data file: test_38)",
                  f < READ_PG / 8 && (tu_stats().pages_around > 0 ||
                                      tu_stats().pages_shared > 0));
    else
        test_cond("under mprotect every page faults", f == READ_PG);
    s = query(&f);
    test_cond("a second query takes no fault: nothing changed",
              s == base_sum() && f == 0);

    test_cond("the helper commits page 5", helper_commits(5, 505));
    s = query(&f);
    test_cond("the next query sees the commit",
              s == base_sum() - 5 + 505 && f == 1);
    s = query(&f);
    test_cond("and then again takes no fault", f == 0);

    /* A page the queries never read, only mapped around a fault (or
     * never mapped under mprotect): its change must be seen too. */
    test_cond("the helper commits page 120", helper_commits(120, 1200));
    E(xbeginQuery());
    i = tu_peek(x, 120, 0);
    test_cond("a query reads the new value of a page mapped around",
              xendQuery() == COMMITTED && i == 1200);

    /* An update transaction while others are attached, after queries that
     * kept more than XTX_KEEP_SHARED pages: afresh. */
    test_cond("the helper commits page 7", helper_commits(7, 707));
    f = tu_stats().faults;
    E(xbegin());
    i = tu_peek(x, 7, 0) + tu_peek(x, 8, 0);
    test_cond("an update transaction after 100 kept pages sees it, and "
              "faults on kept pages",
              READ_PG > XTX_KEEP_SHARED && xend() == COMMITTED &&
                  i == 707 + 8 && tu_stats().faults - f == 2);
    s = query(&f);
    test_cond("after it, queries fault again",
              s == base_sum() - 5 + 505 - 7 + 707 && f > 0);

    /* A few kept pages: the next update transaction starts with them.
     * (A commit first, so that this one drops the pages the query kept.) */
    test_cond("the helper commits page 170", helper_commits(170, 1700));
    E(xbegin());
    i = tu_peek(x, 10, 0) + tu_peek(x, 11, 0);
    *tu_page(x, 12, READ_WRITE, 0) = 1212;
    test_cond("an update transaction reads pages 10 and 11, writes 12",
              xend() == COMMITTED && i == 21);
    test_cond("it keeps those three", tu_stats().kept_pages == 3);
    test_cond("the helper commits page 11", helper_commits(11, 1111));
    f = tu_stats().faults;
    E(xbegin());
    i = tu_peek(x, 10, 0) + tu_peek(x, 11, 0) + tu_peek(x, 12, 0);
    test_cond("the next update transaction sees every change, and faults "
              "only on page 11, which a commit changed",
              xend() == COMMITTED && i == 10 + 1111 + 1212 &&
                  tu_stats().faults - f == 1);
    /* Kept pages are read without a fault, so they are validated as read:
     * a commit that changes one while the transaction runs fails it.  (The
     * helper is not admitted while we run, XAC_WRITERS=1: it runs after
     * about 20 ms without an admitted transaction finishing.) */
    E(xbegin());
    *tu_page(x, 13, READ_WRITE, 0) = 1313;
    test_cond("the helper commits page 10 while an update transaction "
              "runs that kept it",
              helper_commits(10, 1010));
    test_cond("that transaction fails: it may have read page 10",
              xend() == ABORTED);
    E(xbegin());
    *tu_page(x, 13, READ_WRITE, 0) = 1313;
    i = tu_peek(x, 10, 0);
    test_cond("run again, it commits and reads the new page 10",
              xend() == COMMITTED && i == 1010);
    s = query(&f);
    test_cond("and a query sees all of it",
              s == base_sum() - 5 + 505 - 7 + 707 + FEW_KEPT);

    /* The change ring (4 entries a page, at least 1,024) overflows: the
     * change to page 3 is no longer in it, so every kept page goes. */
    ring = 4 * NPG < (int)XSEG_CHANGES_MIN ? (int)XSEG_CHANGES_MIN : 4 * NPG;
    test_cond("the helper commits page 3", helper_commits(3, 303));
    for (i = 0; i < ring + 8; i++)
        if (!helper_commits(150, i))
            abort();
    test_cond("then overflows the change ring", helper_commits(160, 1));
    s = query(&f);
    test_cond("the next query sees page 3's change all the same",
              s == base_sum() - 5 + 505 - 7 + 707 + FEW_KEPT - 3 + 303 && f > 0);

    s = query(&f);
    test_cond("a query at last again takes no fault", f == 0);

    /* A query never waits for a writer: the helper's update transaction is
     * open, and it is the one writer admitted (XAC_WRITERS=1). */
    test_cond("the helper holds an update transaction open",
              write(to_helper[1], "-2 9\n", 5) == 5 &&
                  tu_hear(from_helper[0]) == 'h');
    s = query(&f);
    test_cond("a query runs meanwhile, without a fault", f == 0 &&
              s == base_sum() - 5 + 505 - 7 + 707 + FEW_KEPT - 3 + 303);
    test_cond("the helper commits after it",
              write(to_helper[1], "0 0\n", 4) == 4 &&
                  tu_hear(from_helper[0]) == 'd');

    if (write(to_helper[1], "-1 0\n", 5) != 5)
        abort();
    test_cond("the helper finished", tu_reap(pid));
    close(to_helper[0]);
    close(to_helper[1]);
    close(from_helper[0]);
    close(from_helper[1]);
    E(xMunmap("q.db"));
    E(xShutdown());
}

int main(void)
{
    tu_tmpdir();
    run(1);
    run(0);
    unsetenv("XAC_PTE");
    unsetenv("XAC_WRITERS");
    return test_report();
}
