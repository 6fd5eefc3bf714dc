/* test_03_advisory: setPageAccess declares access so no fault is taken. */
#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_int.h"

#define NPG 64

int main(void)
{
    int *x, i, v = 0, ok;
    size_t ipp = PAGESIZE / sizeof(int);
    unsigned long f0;

    tu_tmpdir();
    E(xInit(".", NONDURABLE));
    x = xMmap("t.db", NPG * PAGESIZE);
    if (x == MAP_FAILED)
        abort();

    E(xbegin());
    f0 = xac_env.xe_flt.ft_faults;
    ok = 1;
    for (i = 0; i < NPG; i++) {
        ok = ok && setPageAccess(&x[i * ipp], READ) == 0;
        v += x[i * ipp];
    }
    test_cond("setPageAccess READ on every page", ok);
    test_cond("reads after setPageAccess READ take no fault",
              xac_env.xe_flt.ft_faults == f0 && v == 0);
    test_cond("setPageAccess on a page already granted",
              setPageAccess(&x[5], READ) == 0);
    /* valgrind 3.19 sometimes delivers this write fault on a read-only
     * page with si_addr == NULL, which no handler can serve; the upgrade
     * is covered natively and under the sanitizers. */
    if (tu_valgrind()) {
        E(setPageAccess(&x[3 * ipp], READ_WRITE));
        x[3 * ipp] = 33;
    } else {
        x[3 * ipp] = 33;
        test_cond("a write after READ faults once to upgrade",
                  xac_env.xe_flt.ft_faults == f0 + 1);
    }
    test_cond("commit", xend() == COMMITTED);
    test_cond("the upgraded write is committed",
              tu_int_at("t.db", 3 * (off_t)PAGESIZE) == 33);

    E(xbegin());
    f0 = xac_env.xe_flt.ft_faults;
    ok = 1;
    for (i = 0; i < NPG; i++) {
        ok = ok && setPageAccess((char *)&x[i * ipp] + 100, READ_WRITE) == 0;
        x[i * ipp] = i + 100;
    }
    test_cond("setPageAccess READ_WRITE on every page", ok);
    test_cond("writes after setPageAccess READ_WRITE take no fault",
              xac_env.xe_flt.ft_faults == f0);
    test_cond("the file is untouched before commit",
              tu_int_at("t.db", 3 * (off_t)PAGESIZE) == 33);
    test_cond("commit", xend() == COMMITTED);
    ok = 1;
    for (i = 0; i < NPG; i++)
        ok = ok && tu_int_at("t.db", i * (off_t)PAGESIZE) == i + 100;
    test_cond("every advised write is committed", ok);

    E(xbegin());
    E(setPageAccess(&x[7 * ipp], READ_WRITE));
    x[7 * ipp] = -1;
    E(xFail());
    test_cond("advised writes abort too", xend() == ABORTED &&
              tu_int_at("t.db", 7 * (off_t)PAGESIZE) == 107);

    E(xbegin());
    E(setPageAccess(&x[9 * ipp], READ));
    test_cond("advice is not a write", xend() == COMMITTED &&
              tu_int_at("t.db", 9 * (off_t)PAGESIZE) == 109);

    E(xShutdown());
    return test_report();
}
