/* test_33_group: group commit gathers the commits of other processes.
 *
 * A process that becomes the sync leader while another process is inside
 * a transaction waits (up to XAC_COMMIT_DELAY_US) for that transaction to
 * reach the log, so that one sync covers both commits.  With the delay
 * off, each commit syncs alone.  The leader stops waiting as soon as the
 * other record is in the log: the delay here is 10 minutes, and the
 * test's alarm ends the process long before that if the leader missed it.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/testhelp.h"
#include "support/tutil.h"

#define NPG 4

static int c2p[2];

/* Add v to the first int of page n, in one committed transaction. */
static int commit_page(int *x, int n, int v)
{
    return tu_commit_add(x, (size_t)n * tu_ipp(), v);
}

/* Begin a transaction on page 1, tell the parent, and commit it a moment
 * later, while the parent's commit is (or is not) waiting for it. */
static void child(void *arg)
{
    int *x, rc;
    (void)arg;

    if (xInit("ctl", DURABLE) != 0)
        _exit(20);
    x = xMmap("g.db", NPG * PAGESIZE);
    if (x == MAP_FAILED)
        _exit(21);
    if (xbegin() != 0)
        _exit(22);
    *tu_page(x, 1, READ_WRITE, 1) += 1;
    tu_tell(c2p[1], 'b');
    usleep(300 * 1000);
    rc = xend();
    xShutdown();
    _exit(rc == COMMITTED ? 0 : 23);
}

/* One round: the parent commits page 0 while the child's transaction
 * runs.  Returns the syncs the two commits took, or -1. */
static long round_syncs(const char *delay_us, int *child_ok)
{
    struct xac_stats s0, s1;
    pid_t pid;
    int *x, st;

    setenv("XAC_COMMIT_DELAY_US", delay_us, 1);
    if (xInit("ctl", DURABLE) != 0)
        return -1;
    x = xMmap("g.db", NPG * PAGESIZE);
    if (x == MAP_FAILED || commit_page(x, 0, 1) != COMMITTED)
        return -1;
    if (xStats(&s0) != 0 || pipe(c2p) != 0)
        return -1;
    pid = fork();
    if (pid == 0)
        child(NULL);
    if (pid < 0 || tu_hear(c2p[0]) != 'b')
        return -1;
    alarm(120);
    if (commit_page(x, 0, 1) != COMMITTED)
        return -1;
    alarm(0);
    *child_ok = waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
                WEXITSTATUS(st) == 0;
    if (xStats(&s1) != 0)
        return -1;
    close(c2p[0]);
    close(c2p[1]);
    xShutdown();
    return (long)(s1.log_syncs - s0.log_syncs);
}

int main(void)
{
    int ok = 0, *x;
    long n;

    tu_tmpdir();
    n = round_syncs("600000000", &ok);
    test_cond("gathering: the child's commit succeeds", ok);
    test_cond("gathering: one sync covers both commits", n == 1);

    ok = 0;
    n = round_syncs("0", &ok);
    test_cond("no delay: the child's commit succeeds", ok);
    test_cond("no delay: each commit syncs alone", n == 2);

    /* Both rounds' commits are in the file: page 0 got 4, page 1 got 2. */
    unsetenv("XAC_COMMIT_DELAY_US");
    test_cond("xInit after the rounds", xInit("ctl", DURABLE) == 0);
    x = xMmap("g.db", NPG * PAGESIZE);
    test_cond("xMmap after the rounds", x != MAP_FAILED);
    if (x != MAP_FAILED) {
        xbegin();
        ok = tu_peek(x, 0, 1) == 4 && tu_peek(x, 1, 1) == 2;
        xend();
        test_cond("every commit of both rounds is there", ok);
    }
    xShutdown();
    return test_report();
}
