/* test_07_mvcc: two processes on one segment: snapshots, validation,
 * read-only queries, conflict policies, a process killed with SIGKILL
 * inside a transaction, and a second xMmap with another length. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_int.h"
#include "xac_os.h"

#define NPG 8

static int p2c[2], c2p[2];
static int *x;

/* valgrind (3.19) sometimes resumes a faulting load with a wrong register
 * after the SIGSEGV handler; under valgrind, declare pages first. */
static int vg;

static int *pg(int n, int mode)
{
    return tu_page(x, n, mode, vg);
}

static pid_t spawn(void (*fn)(void))
{
    pid_t pid;

    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        if (xInit("ctl", NONDURABLE) != 0)
            _exit(20);
        x = xMmap("m.db", NPG * PAGESIZE);
        if (x == MAP_FAILED)
            _exit(21);
        fn();
        xMunmap("m.db");
        xShutdown();
        _exit(0);
    }
    return pid;
}

static int reap(pid_t pid)
{
    int st;
    waitpid(pid, &st, 0);
    return st;
}

/* Child: a snapshot taken before the parent's commit. */
static void snap_child(void)
{
    int a, b, ok;

    xbegin();
    a = *pg(0, READ);
    tu_tell(c2p[1], 'r');       /* read page 0 */
    tu_hear(p2c[0]);            /* parent committed pages 0 and 1 */
    b = *pg(1, READ);        /* page 1, first touched after the commit */
    ok = a == 1 && b == 1;   /* the old snapshot, consistently */
    ok = ok && xValidate() == FAILED; /* page 0 has a newer version */
    *pg(2, READ_WRITE) = 99;
    ok = ok && x[0] == 1;    /* still the snapshot after failing */
    ok = ok && xend() == ABORTED;
    /* A query begun before a commit keeps its snapshot, and commits. */
    xbeginQuery();
    a = *pg(0, READ);
    tu_tell(c2p[1], ok ? 'y' : 'n');
    tu_hear(p2c[0]);            /* parent committed again */
    b = *pg(1, READ);
    ok = a == 2 && b == 2 && xValidate() == PENDING;
    ok = ok && xendQuery() == COMMITTED;
    tu_tell(c2p[1], ok ? 'y' : 'n');
}

/* Child: a query whose snapshot predates the parent's commit of pages 2
 * and 4, so the parent's next transaction reads pool versions. */
static void old_query_child(void)
{
    int a, b;

    xbeginQuery();
    a = *pg(4, READ);
    tu_tell(c2p[1], 'r');
    tu_hear(p2c[0]);
    b = *pg(2, READ);
    tu_tell(c2p[1], a == 0 && b == 0 && xendQuery() == COMMITTED ? 'y' : 'n');
}

/* Child: a query that holds its snapshot until told, so that no version
 * committed meanwhile can be collected. */
static void pin_child(void)
{
    xbeginQuery();
    (void)*pg(0, READ);
    tu_tell(c2p[1], 'r');
    tu_hear(p2c[0]);
    tu_tell(c2p[1], xendQuery() == COMMITTED ? 'y' : 'n');
}

/* Fails every one-page mprotect that grants access with ENOMEM, as the
 * kernel does at vm.max_map_count mappings. */
static int enomem_mprotect(void *addr, size_t len, int prot)
{
    if (len == PAGESIZE && prot != PROT_NONE) {
        errno = ENOMEM;
        return -1;
    }
    return mprotect(addr, len, prot);
}

/* Child: holds page 3 for writing until told, then tries to commit. */
static void hold_child(void)
{
    int rc;

    xbegin();
    *pg(3, READ_WRITE) = 7;
    tu_tell(c2p[1], 'w');
    tu_hear(p2c[0]);
    rc = xend();
    tu_tell(c2p[1], rc == COMMITTED ? 'c' : rc == ABORTED ? 'a' : '?');
}

/* Child: dies by SIGKILL inside a transaction holding page 5. */
static void die_child(void)
{
    xbegin();
    *pg(5, READ_WRITE) = 666;
    tu_tell(c2p[1], 'w');
    for (;;)
        pause();
}

/* Child: dies by SIGKILL in the middle of a commit, holding the commit
 * lock, after copying its page into the version pool. */
static ssize_t kill_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    (void)fd;
    (void)buf;
    (void)n;
    (void)off;
    raise(SIGKILL);
    return -1;
}

static void commit_die_child(void)
{
    xbegin();
    *pg(6, READ_WRITE) = 777;
    *pg(7, READ_WRITE) = 777;
    xos.pwrite = kill_pwrite;
    xend();
    _exit(30); /* not reached */
}

/* Child: maps the same file with another length. */
static void len_child(void)
{
    int *y;

    xMunmap("m.db");
    y = xMmap("m.db", 2 * NPG * PAGESIZE);
    tu_tell(c2p[1], y == MAP_FAILED && errno == EBUSY ? 'y' : 'n');
    x = xMmap("m.db", NPG * PAGESIZE); /* for the xMunmap in spawn() */
}

int main(void)
{
    pid_t pid;
    int st;
    char c;

    vg = tu_valgrind();
    tu_tmpdir();
    if (pipe(p2c) != 0 || pipe(c2p) != 0)
        abort();
    E(xInit("ctl", NONDURABLE));
    x = xMmap("m.db", NPG * PAGESIZE);
    test_cond("map", x != MAP_FAILED);
    E(xbegin());
    *pg(0, READ_WRITE) = 1;
    *pg(1, READ_WRITE) = 1;
    test_cond("initial commit", xend() == COMMITTED);

    /* Snapshots. */
    pid = spawn(snap_child);
    test_cond("child read page 0", tu_hear(c2p[0]) == 'r');
    E(xbegin());
    *pg(0, READ_WRITE) = 2;
    *pg(1, READ_WRITE) = 2;
    test_cond("parent commits while the child's transaction runs",
              xend() == COMMITTED);
    tu_tell(p2c[1], 'g');
    test_cond("the child kept its snapshot, failed, and aborted at xend",
              tu_hear(c2p[0]) == 'y');
    E(xbegin());
    *pg(0, READ_WRITE) = 3;
    *pg(1, READ_WRITE) = 3;
    test_cond("parent commits while the child's query runs",
              xend() == COMMITTED);
    tu_tell(p2c[1], 'g');
    test_cond("the query kept its snapshot and committed",
              tu_hear(c2p[0]) == 'y');
    st = reap(pid);
    test_cond("child exit", WIFEXITED(st) && WEXITSTATUS(st) == 0);
    E(xbegin());
    test_cond("the parent reads its own last commit",
              *pg(0, READ) == 3 && *pg(1, READ) == 3 && *pg(2, READ) == 0);
    test_cond("read-only xend commits", xend() == COMMITTED);

    /* Policies: self-abort (the parent requests a page the child holds). */
    E(xSetPolicy(XAC_POLICY_SELF_ABORT, 0));
    pid = spawn(hold_child);
    test_cond("child holds page 3", tu_hear(c2p[0]) == 'w');
    E(xbegin());
    *pg(3, READ_WRITE) = 8;
    test_cond("self-abort: the requester fails", xValidate() == FAILED);
    test_cond("self-abort: the requester aborts", xend() == ABORTED);
    tu_tell(p2c[1], 'g');
    test_cond("self-abort: the owner commits", tu_hear(c2p[0]) == 'c');
    reap(pid);

    /* Oldest-wins: the child is older, the parent fails. */
    E(xSetPolicy(XAC_POLICY_OLDEST_WINS, 0));
    pid = spawn(hold_child);
    tu_hear(c2p[0]);
    E(xbegin());
    *pg(3, READ_WRITE) = 8;
    test_cond("oldest-wins: the younger requester fails",
              xend() == ABORTED);
    tu_tell(p2c[1], 'g');
    test_cond("oldest-wins: the older owner commits", tu_hear(c2p[0]) == 'c');
    reap(pid);

    /* Requester-wins: the parent wins, the child aborts. */
    E(xSetPolicy(XAC_POLICY_REQUESTER_WINS, 0));
    pid = spawn(hold_child);
    tu_hear(c2p[0]);
    E(xbegin());
    *pg(3, READ_WRITE) = 9;
    test_cond("requester-wins: the requester commits", xend() == COMMITTED);
    tu_tell(p2c[1], 'g');
    test_cond("requester-wins: the owner aborts", tu_hear(c2p[0]) == 'a');
    reap(pid);
    test_cond("xSetPolicy refuses an unknown policy",
              xSetPolicy(17, 0) == XAC_EINVAL);

    /* SIGKILL inside a transaction. */
    E(xSetPolicy(XAC_POLICY_SELF_ABORT, 0));
    pid = spawn(die_child);
    test_cond("child writes page 5", tu_hear(c2p[0]) == 'w');
    kill(pid, SIGKILL);
    st = reap(pid);
    test_cond("child killed", WIFSIGNALED(st));
    E(xbegin());
    test_cond("the dead transaction's write is not visible",
              *pg(5, READ) == 0);
    *pg(5, READ_WRITE) = 5;
    test_cond("its writer word does not block (self-abort)",
              xValidate() == PENDING);
    test_cond("and the survivor commits", xend() == COMMITTED);
    E(xbegin());
    (*pg(5, READ_WRITE))++;
    test_cond("again", xend() == COMMITTED);

    /* SIGKILL inside a commit, holding the lock: the parent's running
     * transaction makes the child commit into the pool. */
    E(xbeginQuery());
    test_cond("a query runs", *pg(6, READ) == 0);
    pid = spawn(commit_die_child);
    st = reap(pid);
    test_cond("child killed inside its commit",
              WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    test_cond("the query still sees its snapshot", *pg(7, READ) == 0);
    test_cond("the query commits", xendQuery() == COMMITTED);
    E(xbegin());
    test_cond("the half-done commit is not visible",
              *pg(6, READ) == 0 && *pg(7, READ) == 0);
    *pg(6, READ_WRITE) = 6;
    test_cond("the next commit repairs the lock and succeeds",
              xend() == COMMITTED);
    E(xbegin());
    test_cond("and its data is there", *pg(6, READ) == 6 && *pg(7, READ) == 0);
    test_cond("read-only", xend() == COMMITTED);

    /* Coarse grants over pages whose snapshot versions are pool frames
     * (past vm.max_map_count with an old snapshot running elsewhere). */
    pid = spawn(old_query_child);
    test_cond("an old query runs", tu_hear(c2p[0]) == 'r');
    E(xbegin());
    *pg(4, READ_WRITE) = 44;
    *pg(2, READ_WRITE) = 22;
    test_cond("commit while it runs", xend() == COMMITTED);
    {
        unsigned long esc = xac_env.xe_flt.ft_escalations;
        int a, b;
        /* Coarse grants are mprotect's (page-table access splits no
         * mapping): map again as under XAC_PTE=0. */
        xac_env.xe_wp.wp_pte_want = 0;
        E(xMunmap("m.db"));
        x = xMmap("m.db", NPG * PAGESIZE);
        test_cond("remapped under mprotect",
                  x != MAP_FAILED && !tu_stats().page_table_access);
        xos.mprotect = enomem_mprotect;
        E(xbegin());
        a = *pg(4, READ);
        b = *pg(2, READ);
        test_cond("coarse grants serve pool versions",
                  xend() == COMMITTED && a == 44 && b == 22 &&
                      xac_env.xe_flt.ft_escalations > esc);
        xos_reset();
        E(xMunmap("m.db"));
        xac_env.xe_wp.wp_pte_want = 1;
        x = xMmap("m.db", NPG * PAGESIZE);
        if (x == MAP_FAILED)
            abort();
    }
    tu_tell(p2c[1], 'g');
    test_cond("the old query still saw its snapshot", tu_hear(c2p[0]) == 'y');
    reap(pid);

    /* A full version pool: with an old snapshot pinned, every commit's
     * versions must be kept; when the pool (2 x 8 pages + 4096 frames)
     * runs out, xend returns XAC_EFULL and publishes nothing. */
    pid = spawn(pin_child);
    test_cond("a query pins an old snapshot", tu_hear(c2p[0]) == 'r');
    {
        int k, rc = COMMITTED, j, before;
        for (k = 1; k <= 2000 && rc == COMMITTED; k++) {
            E(xbegin());
            for (j = 0; j < NPG; j++)
                *pg(j, READ_WRITE) = 1000 + k;
            rc = xend();
        }
        test_cond("the pool fills: xend returns XAC_EFULL", rc == XAC_EFULL);
        E(xbeginQuery());
        before = *pg(0, READ);
        test_cond("the refused commit published nothing",
                  before == 1000 + k - 2 && *pg(7, READ) == 1000 + k - 2);
        test_cond("(query)", xendQuery() == COMMITTED);
        tu_tell(p2c[1], 'g');
        test_cond("the pinning query commits", tu_hear(c2p[0]) == 'y');
        reap(pid);
        E(xbegin());
        *pg(0, READ_WRITE) = 3; /* what the checks below expect */
        *pg(3, READ_WRITE) = 9;
        *pg(5, READ_WRITE) = 6;
        *pg(6, READ_WRITE) = 6;
        *pg(7, READ_WRITE) = 0;
        test_cond("commits work again once the snapshot is gone",
                  xend() == COMMITTED);
    }

    /* Another length in another process. */
    pid = spawn(len_child);
    c = tu_hear(c2p[0]);
    test_cond("a second xMmap with another length gets EBUSY", c == 'y');
    reap(pid);

    E(xMunmap("m.db"));
    test_cond("the last xMunmap leaves every commit in the file",
              tu_int_at("m.db", 0) == 3 &&
                  tu_int_at("m.db", (off_t)(3 * PAGESIZE)) == 9 &&
                  tu_int_at("m.db", (off_t)(5 * PAGESIZE)) == 6 &&
                  tu_int_at("m.db", (off_t)(6 * PAGESIZE)) == 6 &&
                  tu_int_at("m.db", (off_t)(7 * PAGESIZE)) == 0);
    E(xShutdown());
    return test_report();
}
