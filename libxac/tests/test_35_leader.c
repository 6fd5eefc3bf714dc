/* test_35_leader: the group-commit leader runs where syncs complete soonest.
 *
 * Each leader's sync time goes into a moving average for the CPU it ran
 * on (xac.ctl, ch_cpu_sync_us).  A committer about to lead leaves the lead
 * to a sibling that runs a transaction, or waits, on a CPU at least 10 %
 * faster, for at most the commit delay plus the difference (xac_group.c,
 * lead_elsewhere).  The fake rounds give each process a CPU through
 * xos.getcpu and preset the averages; the last round uses the real CPUs
 * and the real disk and checks the bookkeeping.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_ctl.h"
#include "xac_os.h"

#define NPG 4
#define SLOW_CPU 3
#define FAST_CPU 5
#define PAST_TABLE 100000

static int c2p[2], r2p[2];

static int cpu_slow(void) { return SLOW_CPU; }
static int cpu_fast(void) { return FAST_CPU; }
static int cpu_past(void) { return PAST_TABLE; }

/* The child's syncs take at least 2 ms, so its average visibly moves. */
static int sync_2ms(int fd)
{
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    return fdatasync(fd);
}

/* The header of ctl/xac.ctl, mapped shared (munmap sizeof *h), or
 * MAP_FAILED. */
static struct xctl_hdr *map_hdr(void)
{
    struct xctl_hdr *h;
    int fd = open("ctl/" XCTL_NAME, O_RDWR);

    if (fd < 0)
        return MAP_FAILED;
    h = mmap(NULL, sizeof *h, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return h;
}

/* Set the sync averages of the two fake CPUs; with get, read the fast
 * one's back instead.  Returns it, or -1. */
static long averages(long slow_us, long fast_us, int get)
{
    struct xctl_hdr *h = map_hdr();
    long v;

    if (h == MAP_FAILED)
        return -1;
    if (!get) {
        h->ch_cpu_sync_us[SLOW_CPU] = (uint32_t)slow_us;
        h->ch_cpu_sync_us[FAST_CPU] = (uint32_t)fast_us;
    }
    v = h->ch_cpu_sync_us[FAST_CPU];
    munmap(h, sizeof *h);
    return v;
}

/* On the fast CPU: begin a transaction on page 1, tell the parent, commit
 * it a second later (long enough that a parent slowed by a loaded machine
 * still commits first where a round wants it), and report how many syncs
 * it led. */
static void child(void *arg)
{
    struct xac_stats st;
    char leads;
    int *x, rc;
    (void)arg;

    xos.getcpu = cpu_fast;
    xos.fdatasync = sync_2ms;
    if (xInit("ctl", DURABLE) != 0)
        _exit(20);
    x = xMmap("g.db", NPG * PAGESIZE);
    if (x == MAP_FAILED)
        _exit(21);
    if (xbegin() != 0)
        _exit(22);
    *tu_page(x, 1, READ_WRITE, 1) += 1;
    tu_tell(c2p[1], 'b');
    usleep(1000 * 1000);
    rc = xend();
    if (xStats(&st) != 0)
        _exit(24);
    leads = (char)('0' + st.log_leads);
    tu_tell(r2p[1], leads);
    xShutdown();
    _exit(rc == COMMITTED ? 0 : 23);
}

struct round {
    const char *by_cpu, *delay_us;
    int (*cpu)(void);             /* the parent's CPU */
    long slow_us, fast_us;        /* preset averages */
    /* what the round saw */
    long leads, deferred, syncs;  /* parent's, and all syncs */
    int child_leads, child_ok;
    long fast_after;              /* the fast CPU's average afterwards */
};

/* The parent commits page 0 while the child's transaction runs. */
static int run_round(struct round *r)
{
    struct xac_stats s0, s1;
    pid_t pid;
    int *x, st;

    setenv("XAC_LEAD_BY_CPU", r->by_cpu, 1);
    setenv("XAC_COMMIT_DELAY_US", r->delay_us, 1);
    xos.getcpu = r->cpu;
    if (xInit("ctl", DURABLE) != 0)
        return -1;
    x = xMmap("g.db", NPG * PAGESIZE);
    if (x == MAP_FAILED || tu_commit_add(x, 0, 1) != COMMITTED)
        return -1;
    if (averages(r->slow_us, r->fast_us, 0) < 0)
        return -1;
    if (xStats(&s0) != 0 || pipe(c2p) != 0 || pipe(r2p) != 0)
        return -1;
    pid = fork();
    if (pid == 0)
        child(NULL);
    if (pid < 0 || tu_hear(c2p[0]) != 'b')
        return -1;
    alarm(120);
    if (tu_commit_add(x, 0, 1) != COMMITTED)
        return -1;
    r->child_leads = tu_hear(r2p[0]) - '0';
    alarm(0);
    r->child_ok = waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
                  WEXITSTATUS(st) == 0;
    if (xStats(&s1) != 0)
        return -1;
    r->leads = (long)(s1.log_leads - s0.log_leads);
    r->deferred = (long)(s1.log_deferred - s0.log_deferred);
    r->syncs = (long)(s1.log_syncs - s0.log_syncs);
    r->fast_after = averages(0, 0, 1);
    close(c2p[0]);
    close(c2p[1]);
    close(r2p[0]);
    close(r2p[1]);
    xShutdown();
    xos_reset();
    return 0;
}

/* Real CPUs, real disk: two processes commit n times each, together, on
 * pages 2 and 3; each tells the syncs it led and the commits it made
 * alone (one sync each, no leader). */
static int real_page;

static void real_worker(void *arg)
{
    struct xac_stats st;
    int *x, i, n = *(int *)arg, pg = real_page;

    if (xInit("ctl", DURABLE) != 0)
        _exit(30);
    x = xMmap("g.db", NPG * PAGESIZE);
    if (x == MAP_FAILED)
        _exit(31);
    tu_tell(c2p[1], 'r');
    if (tu_hear(r2p[0]) != 'g')
        _exit(32);
    for (i = 0; i < n; i++)
        if (tu_commit_add(x, (size_t)pg * tu_ipp(), 1) != COMMITTED)
            _exit(33);
    /* Detaching may lead a last sync. */
    if (xMunmap("g.db") != 0 || xStats(&st) != 0 || st.log_leads > 255 ||
        st.direct_commits > 255)
        _exit(34);
    tu_tell(c2p[1], (char)st.log_leads);
    tu_tell(c2p[1], (char)st.direct_commits);
    xShutdown();
    _exit(0);
}

int main(void)
{
    struct round r;
    struct xac_stats s0, s1;
    long leads = 0, nonzero = 0;
    int ok, *x, n = 50, i, st, cpus;
    pid_t pid[2];

    tu_tmpdir();
    setenv("XAC_LEAD_BY_CPU", "2", 1);
    test_cond("XAC_LEAD_BY_CPU=2 is refused", xInit("ctl", DURABLE) == XAC_EINVAL);
    setenv("XAC_LEAD_BY_CPU", "yes", 1);
    test_cond("XAC_LEAD_BY_CPU=yes is refused", xInit("ctl", DURABLE) == XAC_EINVAL);

    /* 1. Our CPU's syncs take 1 s, the child's 100 us: we leave it the
     * lead; its sync covers both commits. */
    r = (struct round){"1", "600000000", cpu_slow, 1000000, 100, 0, 0, 0, 0, 0, 0};
    test_cond("slow CPU: the round runs", run_round(&r) == 0);
    test_cond("slow CPU: the child's commit succeeds", r.child_ok);
    test_cond("slow CPU: we left the lead once", r.deferred == 1);
    test_cond("slow CPU: we led no sync", r.leads == 0);
    test_cond("slow CPU: the child led the one sync", r.child_leads == 1 && r.syncs == 1);
    test_cond("slow CPU: the child's sync time went into its CPU's average",
              r.fast_after > 100);

    /* 2. The same with XAC_LEAD_BY_CPU=0: we lead and gather the child. */
    r = (struct round){"0", "600000000", cpu_slow, 1000000, 100, 0, 0, 0, 0, 0, 0};
    test_cond("off: the round runs", run_round(&r) == 0);
    test_cond("off: the child's commit succeeds", r.child_ok);
    test_cond("off: we never left the lead", r.deferred == 0);
    test_cond("off: we led the one sync", r.leads == 1 && r.child_leads == 0 && r.syncs == 1);

    /* 3. Our CPU is faster: we lead. */
    r = (struct round){"1", "600000000", cpu_slow, 100, 1000000, 0, 0, 0, 0, 0, 0};
    test_cond("fast CPU: the round runs", run_round(&r) == 0);
    test_cond("fast CPU: we never left the lead", r.deferred == 0);
    test_cond("fast CPU: we led the one sync", r.leads == 1 && r.child_leads == 0 && r.syncs == 1);

    /* 4. Without a commit delay, leaving the lead lasts at most the
     * difference, 20 ms here: we lead our own sync long before the child
     * commits, and it syncs its own. */
    r = (struct round){"1", "0", cpu_slow, 20000, 1, 0, 0, 0, 0, 0, 0};
    test_cond("bounded: the round runs", run_round(&r) == 0);
    test_cond("bounded: the child's commit succeeds", r.child_ok);
    test_cond("bounded: we left the lead, then took it", r.deferred == 1 && r.leads == 1);
    test_cond("bounded: two syncs", r.child_leads == 1 && r.syncs == 2);

    /* 5. A CPU number past the table counts as unknown: we lead. */
    r = (struct round){"1", "600000000", cpu_past, 1000000, 100, 0, 0, 0, 0, 0, 0};
    test_cond("unknown CPU: the round runs", run_round(&r) == 0);
    test_cond("unknown CPU: we never left the lead", r.deferred == 0 && r.leads == 1);

    /* 6. Real CPUs and disk: every sync has one leader, each leader's CPU
     * has an average, and every commit is there. */
    unsetenv("XAC_LEAD_BY_CPU");
    unsetenv("XAC_COMMIT_DELAY_US");
    ok = xInit("ctl", DURABLE) == 0 && xStats(&s0) == 0 &&
         pipe(c2p) == 0 && pipe(r2p) == 0;
    test_cond("real: set up", ok);
    if (ok) {
        /* Forget the fake rounds' averages. */
        struct xctl_hdr *h = map_hdr();

        ok = h != MAP_FAILED;
        for (i = 0; ok && i < (int)XCTL_CPUS; i++)
            h->ch_cpu_sync_us[i] = 0;
        for (i = 0; i < 2; i++) {
            real_page = 2 + i;
            pid[i] = fork();
            if (pid[i] == 0)
                real_worker(&n);
        }
        ok = ok && tu_hear(c2p[0]) == 'r' && tu_hear(c2p[0]) == 'r';
        tu_tell(r2p[1], 'g');
        tu_tell(r2p[1], 'g');
        alarm(300);
        for (i = 0; i < 4; i++)
            leads += (unsigned char)tu_hear(c2p[0]);
        for (i = 0; i < 2; i++)
            ok = ok && waitpid(pid[i], &st, 0) == pid[i] && WIFEXITED(st) &&
                 WEXITSTATUS(st) == 0;
        alarm(0);
        test_cond("real: both workers commit everything", ok);
        ok = xStats(&s1) == 0;
        test_cond("real: each sync had one leader, or was an alone commit's",
                  ok && leads > 0 && (unsigned long long)leads ==
                                         s1.log_syncs - s0.log_syncs);
        cpus = (int)sysconf(_SC_NPROCESSORS_CONF);
        for (i = 0; h != MAP_FAILED && i < (int)XCTL_CPUS; i++)
            nonzero += h->ch_cpu_sync_us[i] != 0 && i < cpus;
        test_cond("real: the leaders' CPUs have averages", nonzero >= 1);
        if (h != MAP_FAILED)
            munmap(h, sizeof *h);
    }
    x = xMmap("g.db", NPG * PAGESIZE);
    test_cond("real: xMmap", x != MAP_FAILED);
    if (x != MAP_FAILED) {
        xbegin();
        ok = tu_peek(x, 0, 1) == 10 && tu_peek(x, 1, 1) == 5 &&
             tu_peek(x, 2, 1) == n && tu_peek(x, 3, 1) == n;
        xend();
        test_cond("real: every commit of every round is there", ok);
    }
    xShutdown();
    return test_report();
}
