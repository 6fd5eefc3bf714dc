/* test_09_many: issue B's scale targets together: 1,024 processes with one
 * 16 GiB segment mapped at the same time, each committing transactions
 * that read one shared page and write a page of its own, spread over the
 * whole segment (contention is test_08's subject; a counter shared by
 * 1,024 processes on 2 cores only measures the scheduler).  Every process is mapped and running before any of them
 * begins (a pipe closed by the parent releases them all at once), so the
 * slot table, the commit lock and the shared page table see all of them
 * live.  Under valgrind and the sanitizers fewer processes run (they
 * multiply each one's memory), on the same code path. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "support/testhelp.h"
#include "support/tutil.h"

#define TXNS 3

static size_t npg = (size_t)4 << 20; /* 4M pages = 16 GiB */
static int ready[2], go[2];
static pid_t *pids; /* static: the children exit holding it, not leaking it */

static int vg; /* under valgrind: declare pages (see test_07_mvcc.c) */

/* The first int of page pg, declared first under valgrind, which (3.19)
 * sometimes resumes a faulting access with a wrong register. */
static int *at(int *x, size_t pg, int mode)
{
    int *p = x + pg * tu_ipp();
    if (vg)
        setPageAccess(p, mode);
    return p;
}

/* Child i's own page: spread evenly over the segment, never page 0. */
static size_t own_page(int i, int nproc)
{
    return 1 + (size_t)i * ((npg - 1) / (size_t)nproc);
}

static void child(int i, int nproc)
{
    int *x, k, rc, seen = 0;
    char c = 'r';
    struct pollfd p;

    close(ready[0]);
    close(go[1]);
    if (xInit("ctl", NONDURABLE) != 0)
        _exit(20);
    if (xSetPolicy(XAC_POLICY_SELF_ABORT, 2000) != 0)
        _exit(21);
    x = xMmap("big.db", npg * PAGESIZE);
    if (x == MAP_FAILED)
        _exit(22);
    if (write(ready[1], &c, 1) != 1)
        _exit(23);
    p.fd = go[0];
    p.events = POLLIN;
    if (poll(&p, 1, 600000) != 1) /* EOF when the parent closes it */
        _exit(24);
    for (k = 0; k < TXNS; k++) {
        do {
            xbegin();
            seen = *at(x, 0, READ);
            *at(x, own_page(i, nproc), READ_WRITE) += 1;
            rc = xend();
        } while (rc == ABORTED);
        if (rc != COMMITTED || seen != 4242)
            _exit(25);
    }
    if (xMunmap("big.db") != 0 || xShutdown() != 0)
        _exit(26);
    _exit(0);
}

int main(void)
{
    int nproc = 1024, i, st, ok = 1, started = 0, exited = 0, *x, v;
    char c;

#if defined(__SANITIZE_ADDRESS__)
    nproc = 64;
#endif
    vg = tu_valgrind();
    if (vg)
        nproc = 16;
    if (getenv("XAC_TEST09_PROCS") != NULL) /* for measuring smaller runs */
        nproc = atoi(getenv("XAC_TEST09_PROCS"));
    if (nproc < 1)
        nproc = 1;
    tu_tmpdir();
    E(xInit("ctl", NONDURABLE));
    x = xMmap("big.db", npg * PAGESIZE);
    test_cond("xMmap of 16 GiB", x != MAP_FAILED);
    if (x == MAP_FAILED)
        return test_report();
    E(xbegin());
    *at(x, 0, READ_WRITE) = 4242; /* what every process must read */
    test_cond("the shared page is written", xend() == COMMITTED);
    E(xMunmap("big.db"));
    E(xShutdown());
    if (pipe(ready) != 0 || pipe(go) != 0)
        abort();
    pids = calloc((size_t)nproc, sizeof *pids);
    if (pids == NULL)
        abort();
    fflush(NULL);
    for (i = 0; i < nproc; i++) {
        pids[i] = fork();
        if (pids[i] == 0)
            child(i, nproc);
        if (pids[i] < 0)
            break;
    }
    close(ready[1]);
    close(go[0]);
    while (started < nproc && read(ready[0], &c, 1) == 1)
        started++;
    test_cond("every process mapped the 16 GiB segment before any began",
              started == nproc);
    close(go[1]); /* go */
    for (i = 0; i < nproc && pids[i] > 0; i++)
        if (waitpid(pids[i], &st, 0) == pids[i] && WIFEXITED(st) &&
            WEXITSTATUS(st) == 0)
            exited++;
    test_cond("every process read the shared page, committed its "
              "transactions and exited",
              exited == nproc);
    printf("# %d processes, %d transactions each, on a %zu-page segment\n",
           nproc, TXNS, npg);

    E(xInit("ctl", NONDURABLE));
    x = xMmap("big.db", npg * PAGESIZE);
    test_cond("the parent maps it afterwards", x != MAP_FAILED);
    if (x == MAP_FAILED)
        return test_report();
    E(xbeginQuery());
    v = *at(x, 0, READ);
    for (i = 0; i < nproc; i++)
        if (*at(x, own_page(i, nproc), READ) != TXNS)
            ok = 0;
    test_cond("the final query commits", xendQuery() == COMMITTED);
    test_cond("the shared page is unchanged", v == 4242);
    test_cond("every process's own page holds its transactions", ok);
    E(xMunmap("big.db"));
    E(xShutdown());
    free(pids);
    return test_report();
}
