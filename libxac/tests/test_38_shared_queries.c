/* test_38_shared_queries: under page-table access a read-only transaction
 * maps a window of 64 pages whose snapshot versions are all the data
 * file's straight from the file's page cache, copying nothing
 * (xac_share.c), and what it reads stays its snapshot's: a commit by
 * another process is seen by the next query, never by the running one,
 * even while garbage collection writes versions into the data file; an
 * update transaction after such queries still sees every commit and
 * commits its own.  XAC_SHARE=0 copies as before.
 *
 * A helper process stays attached and commits what the test tells it
 * (page and value down a pipe), so the test process is never alone.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "support/testhelp.h"
#include "support/tutil.h"

#define NPG 256     /* four windows of 64 pages */
#define READ_PG 128 /* the queries read windows 0 and 1 */
#define FILLER 200  /* the page the helper's filler commits write */

static int *x;
static int to_helper[2], from_helper[2];

/* The helper: "page value" commits page = value and answers 'd';
 * "-3 n" makes n commits to page FILLER (work for the garbage collector)
 * and answers 'd'; "-1 0" ends it. */
static void helper(void)
{
    int *y, pg, v, i;
    FILE *in = fdopen(to_helper[0], "r");

    if (in == NULL || xInit("ctl", NONDURABLE) != 0)
        _exit(20);
    y = xMmap("s.db", NPG * PAGESIZE);
    if (y == MAP_FAILED)
        _exit(21);
    tu_tell(from_helper[1], 'r');
    while (fscanf(in, "%d %d", &pg, &v) == 2 && pg != -1) {
        for (i = 0; i < (pg == -3 ? v : 1); i++) {
            do {
                xbegin();
                y[(size_t)(pg == -3 ? FILLER : pg) * tu_ipp()] =
                    pg == -3 ? i : v;
            } while (xend() != COMMITTED);
        }
        tu_tell(from_helper[1], 'd');
    }
    xMunmap("s.db");
    xShutdown();
    _exit(0);
}

static int tell_helper(int pg, int v)
{
    char line[64];
    int len = snprintf(line, sizeof line, "%d %d\n", pg, v);

    return write(to_helper[1], line, (size_t)len) == len &&
           tu_hear(from_helper[0]) == 'd';
}

/* The sum of the first ints of pages [0, READ_PG), read in the running
 * transaction. */
static long sum_pages(void)
{
    long sum = 0;
    int i;

    for (i = 0; i < READ_PG; i++)
        sum += tu_peek(x, i, 0);
    return sum;
}

/* One query over [0, READ_PG): its sum, and the faults it took. */
static long query(unsigned long long *faults)
{
    unsigned long long f0 = tu_stats().faults;
    long sum;

    E(xbeginQuery());
    sum = sum_pages();
    if (xendQuery() != COMMITTED)
        abort();
    *faults = tu_stats().faults - f0;
    return sum;
}

static long base_sum(void)
{
    return (long)READ_PG * (READ_PG - 1) / 2;
}

/* Number the pages and leave, so that every version is the data file's. */
static void number_pages(void)
{
    int i;

    E(xInit("ctl", NONDURABLE));
    x = xMmap("s.db", NPG * PAGESIZE);
    if (x == MAP_FAILED)
        abort();
    E(xbegin());
    for (i = 0; i < NPG; i++)
        *tu_page(x, i, READ_WRITE, 0) = i;
    test_cond("the pages are numbered", xend() == COMMITTED);
    E(xMunmap("s.db"));
    E(xShutdown());
}

static void run(int share)
{
    unsigned long long f, shared0;
    long s;
    pid_t pid;
    int shares, v;

    printf("# XAC_SHARE=%d\n", share);
    setenv("XAC_SHARE", share ? "1" : "0", 1);
    number_pages();
    E(xInit("ctl", NONDURABLE));
    x = xMmap("s.db", NPG * PAGESIZE);
    if (x == MAP_FAILED)
        abort();
    if (pipe(to_helper) != 0 || pipe(from_helper) != 0)
        abort();
    fflush(NULL);
    pid = fork();
    if (pid == 0)
        helper();
    test_cond("a second process is attached",
              tu_hear(from_helper[0]) == 'r');
    shares = share && tu_stats().page_table_access;

    shared0 = tu_stats().pages_shared;
    s = query(&f);
    test_cond("the first query reads every page", s == base_sum() && f > 0);
    if (shares)
        test_cond("one fault maps each window from the data file",
                  f == READ_PG / 64 &&
                      tu_stats().pages_shared - shared0 == READ_PG);
    else
        test_cond("nothing is mapped from the data file",
                  tu_stats().pages_shared == shared0);
    s = query(&f);
    test_cond("a second query takes no fault", s == base_sum() && f == 0);

    test_cond("the helper commits page 5", tell_helper(5, 505));
    s = query(&f);
    test_cond("the next query sees the commit",
              s == base_sum() - 5 + 505 && f > 0);
    s = query(&f);
    test_cond("and then again takes no fault",
              s == base_sum() - 5 + 505 && f == 0);

    /* A running query keeps its snapshot, while the helper commits to a
     * page it reads and the garbage collector writes versions into the
     * data file. */
    E(xbeginQuery());
    v = tu_peek(x, 70, 0);
    test_cond("a query reads page 70", v == 70);
    test_cond("the helper commits page 70 meanwhile", tell_helper(70, 7070));
    test_cond("and 3,000 more commits", tell_helper(-3, 3000));
    s = sum_pages();
    test_cond("the query still reads its snapshot",
              tu_peek(x, 70, 0) == 70 && s == base_sum() - 5 + 505);
    test_cond("it commits", xendQuery() == COMMITTED);
    s = query(&f);
    test_cond("the next query sees page 70's commit",
              s == base_sum() - 5 + 505 - 70 + 7070);

    /* An update transaction after the queries: its reads see the commits
     * and its writes reach the other process. */
    test_cond("the helper commits page 100", tell_helper(100, 1000));
    E(xbegin());
    v = tu_peek(x, 100, 0) + tu_peek(x, 70, 0);
    *tu_page(x, 101, READ_WRITE, 0) = 1010;
    test_cond("an update transaction reads the commits and commits",
              xend() == COMMITTED && v == 1000 + 7070);
    s = query(&f);
    test_cond("a query then sees all of them",
              s == base_sum() - 5 + 505 - 70 + 7070 - 100 + 1000 - 101 +
                       1010);
    test_cond("the helper commits page 64 after it", tell_helper(64, 640));
    s = query(&f);
    test_cond("the next query sees that too",
              s == base_sum() - 5 + 505 - 70 + 7070 - 100 + 1000 - 101 +
                       1010 - 64 + 640);

    if (write(to_helper[1], "-1 0\n", 5) != 5)
        abort();
    test_cond("the helper finished", tu_reap(pid));
    close(to_helper[0]);
    close(to_helper[1]);
    close(from_helper[0]);
    close(from_helper[1]);
    E(xMunmap("s.db"));
    E(xShutdown());
    test_cond("the file holds every commit",
              tu_int_at("s.db", (off_t)70 * PAGESIZE) == 7070 &&
                  tu_int_at("s.db", (off_t)101 * PAGESIZE) == 1010 &&
                  tu_int_at("s.db", (off_t)64 * PAGESIZE) == 640);
}

int main(void)
{
    tu_tmpdir();
    run(1);
    run(0);
    unsetenv("XAC_SHARE");
    return test_report();
}
