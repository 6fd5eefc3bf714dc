/* test_02_commit: commit, abort, nesting, and data across sessions. */
#include <string.h>

#include "support/testhelp.h"
#include "support/tutil.h"

#define NPG 16

static int *map(void)
{
    int *x = xMmap("t.db", NPG * PAGESIZE);
    if (x == MAP_FAILED)
        abort();
    return x;
}

static off_t at(int pg)
{
    return (off_t)pg * (off_t)PAGESIZE;
}

int main(void)
{
    int *x, v, rc, i, ok;

    tu_tmpdir();
    E(xInit(".", NONDURABLE));
    x = map();

    E(xbegin());
    test_cond("a new file reads as zeros", x[0] == 0 && x[3 * tu_ipp()] == 0);
    x[0] = 41;
    x[0]++;
    x[5 * tu_ipp() + 7] = 77;
    test_cond("the transaction sees its own writes",
              x[0] == 42 && x[5 * tu_ipp() + 7] == 77);
    test_cond("the file is untouched before commit",
              tu_int_at("t.db", 0) == 0);
    test_cond("xend commits", xend() == COMMITTED);
    test_cond("the commit is in the file before xMunmap",
              tu_int_at("t.db", 0) == 42 &&
                  tu_int_at("t.db", at(5) + 7 * 4) == 77);
    E(xMunmap("t.db"));
    test_cond("the commit is in the file after xMunmap (read(2))",
              tu_int_at("t.db", 0) == 42);

    /* A second session reads what the first committed. */
    x = map();
    E(xbegin());
    test_cond("a second xMmap session reads the committed data",
              x[0] == 42 && x[5 * tu_ipp() + 7] == 77);
    test_cond("read-only transaction commits", xend() == COMMITTED);

    /* Abort: xFail marks the transaction failed; xend rolls it back. */
    E(xbegin());
    x[0] = 1000;
    x[9 * tu_ipp()] = 9;
    test_cond("xValidate before failing says PENDING",
              xValidate() == PENDING);
    E(xFail());
    test_cond("xValidate after failing says FAILED", xValidate() == FAILED);
    test_cond("a failed transaction still sees its writes", x[0] == 1000);
    test_cond("xend aborts", xend() == ABORTED);
    test_cond("abort leaves the file untouched",
              tu_int_at("t.db", 0) == 42 && tu_int_at("t.db", at(9)) == 0);
    E(xbegin());
    test_cond("after abort the segment shows the committed data",
              x[0] == 42 && x[9 * tu_ipp()] == 0);
    test_cond("and the next transaction commits", xend() == COMMITTED);

    /* Nesting is subsumed by the outermost transaction. */
    E(xbegin());
    x[1] = 1;
    E(xbegin());
    x[2 * tu_ipp()] = 2;
    test_cond("inner xend returns PENDING", xend() == PENDING);
    test_cond("nothing is committed at the inner xend",
              tu_int_at("t.db", at(2)) == 0);
    test_cond("outer xend commits", xend() == COMMITTED);
    test_cond("both levels' writes are committed",
              tu_int_at("t.db", 4) == 1 && tu_int_at("t.db", at(2)) == 2);

    E(xbegin());
    x[3 * tu_ipp()] = 3;
    E(xbegin());
    E(xFail());
    test_cond("inner xend of a failed transaction returns FAILED",
              xend() == FAILED);
    test_cond("the outer transaction then aborts", xend() == ABORTED);
    test_cond("nested abort leaves the file untouched",
              tu_int_at("t.db", at(3)) == 0);

    /* The thesis's retry loop (Figure 2-1) around one increment. */
    for (i = 0; i < 100; i++) {
        while (1) {
            xbegin();
            x[0]++;
            if (xend() == COMMITTED)
                break;
        }
    }
    test_cond("100 committed increments", tu_int_at("t.db", 0) == 142);

    /* Read, then write the same page: the second fault upgrades. */
    E(xbegin());
    v = x[4 * tu_ipp()];
    x[4 * tu_ipp()] = v + 5;
    rc = xend();
    test_cond("read-then-write commits",
              rc == COMMITTED && tu_int_at("t.db", at(4)) == 5);

    /* Read-only transactions. */
    E(xbeginQuery());
    v = x[0];
    test_cond("xendQuery commits", xendQuery() == COMMITTED && v == 142);

    /* Every page, twice, to exercise reuse of revoked pages. */
    ok = 1;
    for (rc = 0; rc < 2; rc++) {
        E(xbegin());
        for (i = 0; i < NPG; i++)
            x[i * (int)tu_ipp() + 1] += i;
        ok = ok && xend() == COMMITTED;
    }
    for (i = 0; i < NPG; i++)
        ok = ok && tu_int_at("t.db", at(i) + 4) == (i == 0 ? 1 : 0) + 2 * i;
    test_cond("all pages written twice are committed", ok);

    E(xShutdown());
    test_cond("the file keeps the data after xShutdown",
              tu_int_at("t.db", 0) == 142);
    test_cond("xShutdown unmapped the segment", xMunmap("t.db") ==
                                                    XAC_ENOTINIT);
    return test_report();
}
