/* test_32_overlap: what another process may do while a durable commit
 * waits for its sync, and how a transaction that meets a newer version of
 * a page it has not read goes on.
 *
 * The parent commits page 0 DURABLE; its log sync is held (the OS layer's
 * fdatasync waits for the child).  Meanwhile the child begins, reads the
 * page the parent published, writes it, and must not fail: the parent's
 * writer word was given up once its versions were published.  Then a
 * snapshot extension: the child's transaction, older than a commit of
 * page 2, reads page 2 for the first time, and goes on with the newer
 * version instead of failing. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_os.h"

#define NPG 8

static int p2c[2], c2p[2];
static int *x;
static int (*real_fdatasync)(int);
static int hold_syncs; /* hold the next sync until the child says so */

/* The parent's fdatasync: when asked, tell the child the commit is
 * published and waiting, and wait until the child is done. */
static int held_sync(int fd)
{
    if (hold_syncs) {
        hold_syncs = 0;
        tu_tell(p2c[1], 's');
        if (tu_hear(c2p[0]) != 'w')
            abort();
    }
    return real_fdatasync(fd);
}

static int *at(int n)
{
    return x + (size_t)n * tu_ipp();
}

static void child(void)
{
    struct xac_stats st;
    int ok, v;

    if (xInit("ctl", DURABLE) != 0)
        _exit(20);
    x = xMmap("o.db", NPG * PAGESIZE);
    if (x == MAP_FAILED)
        _exit(21);
    tu_tell(c2p[1], 'a'); /* attached */
    if (tu_hear(p2c[0]) != 's')
        _exit(22);
    /* The parent's commit of page 0 is published, its sync held. */
    xbegin();
    v = *at(0);
    *at(0) = v + 1;
    ok = v == 1 && xValidate() == PENDING;
    tu_tell(c2p[1], 'w');
    ok = ok && xend() == COMMITTED;
    tu_tell(c2p[1], ok ? 'y' : 'n');

    /* A snapshot older than the parent's next commit. */
    xbegin();
    v = *at(3);
    tu_tell(c2p[1], 'r');
    if (tu_hear(p2c[0]) != 'c')
        _exit(23);
    ok = v == 0 && *at(2) == 7; /* page 2, newer than the snapshot */
    *at(4) = *at(2) + 1;
    ok = ok && xend() == COMMITTED;
    ok = ok && xStats(&st) == 0 && st.extensions >= 1;
    /* A page read before a newer commit cannot move: that fails. */
    xbegin();
    v = *at(3);
    tu_tell(c2p[1], ok ? 'y' : 'n');
    if (tu_hear(p2c[0]) != 'c')
        _exit(24);
    ok = v == 0 && *at(3) == 0;       /* the snapshot's value */
    *at(5) = 1;
    ok = ok && xValidate() == FAILED; /* page 3 changed after it */
    ok = ok && xend() == ABORTED;
    tu_tell(c2p[1], ok ? 'y' : 'n');
    xMunmap("o.db");
    xShutdown();
}

int main(void)
{
    pid_t pid;
    int st;

    tu_tmpdir();
    if (pipe(p2c) != 0 || pipe(c2p) != 0)
        abort();
    E(xInit("ctl", DURABLE));
    x = xMmap("o.db", NPG * PAGESIZE);
    test_cond("map", x != MAP_FAILED);
    /* A first commit creates the log, so that the next sync is a
     * commit's. */
    E(xbegin());
    *at(7) = 1;
    test_cond("a first commit", xend() == COMMITTED);
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        child();
        _exit(0);
    }
    test_cond("the child attached", tu_hear(c2p[0]) == 'a');

    real_fdatasync = xos.fdatasync;
    xos.fdatasync = held_sync;
    hold_syncs = 1;
    E(xbegin());
    *at(0) = 1;
    test_cond("the parent's commit is stable once the child wrote",
              xend() == COMMITTED);
    test_cond("the child wrote the page during the parent's sync and "
              "committed",
              tu_hear(c2p[0]) == 'y');

    test_cond("the child's next transaction began", tu_hear(c2p[0]) == 'r');
    E(xbegin());
    *at(2) = 7;
    test_cond("the parent commits page 2", xend() == COMMITTED);
    tu_tell(p2c[1], 'c');
    test_cond("the child read page 2's newer version and committed",
              tu_hear(c2p[0]) == 'y');
    E(xbegin());
    *at(3) = 9;
    test_cond("the parent commits page 3", xend() == COMMITTED);
    tu_tell(p2c[1], 'c');
    test_cond("the child, which had read page 3, fails",
              tu_hear(c2p[0]) == 'y');
    waitpid(pid, &st, 0);
    test_cond("the child exits cleanly", WIFEXITED(st) &&
                                             WEXITSTATUS(st) == 0);
    xos.fdatasync = real_fdatasync;

    E(xbegin());
    test_cond("page 0 has both increments", *at(0) == 2);
    test_cond("page 4 has the child's write", *at(4) == 8);
    test_cond("page 5 has no write of the failed transaction", *at(5) == 0);
    test_cond("read-only end", xend() == COMMITTED);
    E(xMunmap("o.db"));
    E(xShutdown());
    return test_report();
}
