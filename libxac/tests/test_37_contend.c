/* test_37_contend: contention management (xac_contend.c).
 *
 * - Processes that all increment one counter under every policy, without
 *   backoff, lose no increment, and none of their transactions aborts
 *   more than XAC_ESCALATE times before it commits.
 * - Escalation: after XAC_ESCALATE conflict aborts the next attempt is
 *   irrevocable: it takes a page from the transaction holding it even
 *   under self-abort, nobody (requester-wins) takes one from it, other
 *   commits wait for it, and it commits.  The statistics and xConflicts
 *   blame the page on both sides.
 * - Admission (XAC_WRITERS): by default one place more than the CPUs for
 *   nondurable writers, twice the CPUs for durable ones; a writer waits
 *   while the admitted one runs;
 *   a writer that the admitted one waits for runs after all (a throttle,
 *   not a lock); a dead admitted writer and a dead irrevocable one are
 *   reaped instead of waited for.
 * - Turns (XAC_TURN_US): within its turn a writer holds its place between
 *   transactions and its next one keeps it without waiting; a writer that
 *   comes meanwhile takes the place over; leaving (xShutdown) or dying
 *   gives it up; a commit after the turn leaves the count.
 * - Handing the place over (XAC_HANDOFF_US): a writer whose turn ended
 *   and which woke a waiter yields its CPU while the waiter has not taken
 *   the place, no longer than the bound, and not at all with 0.
 * - Losing a page: the loser sleeps on the futex word of its rival's
 *   transaction (counted in ch_rival_sleepers) until the rival ends,
 *   and the rival's end wakes it.
 * Waits are observed in the control file's waiter counts, never timed.
 */
#include <linux/futex.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_int.h"
#include "xac_os.h"

#define NPG 16
#define HAMMER_PROCS 6
#define HAMMER_INCS 300
#define HAMMER_ESCALATE 4

static int *x;

static struct xctl_hdr *ctl(void)
{
    return xac_env.xe_ctl.cx_hdr;
}

static void attach(void)
{
    E(xInit("ctl", NONDURABLE));
    x = xMmap("c.db", NPG * PAGESIZE);
    if (x == MAP_FAILED)
        abort();
}

static void detach(void)
{
    E(xMunmap("c.db"));
    E(xShutdown());
}

static int *page(int n)
{
    return tu_page(x, n, READ_WRITE, 0);
}

/* Wait until *w (a control-file word) is at least v. */
static void await(const uint32_t *w, uint32_t v)
{
    while (__atomic_load_n(w, __ATOMIC_SEQ_CST) < v)
        usleep(100);
}

/* ---- every policy hammering one page ---------------------------------- */

struct hammer {
    int max_attempts[HAMMER_PROCS];
    unsigned long long retries_max[HAMMER_PROCS], escalations[HAMMER_PROCS];
};

static void hammer(int k, struct hammer *h)
{
    int i, attempts;

    attach();
    E(xSetPolicy(k % 4, 0));
    for (i = 0; i < HAMMER_INCS; i++) {
        attempts = 0;
        do {
            attempts++;
            E(xbegin());
            (*page(0))++;
            *page(1 + k) = i;
        } while (xend() != COMMITTED);
        if (attempts > h->max_attempts[k])
            h->max_attempts[k] = attempts;
    }
    h->retries_max[k] = tu_stats().retries_max;
    h->escalations[k] = tu_stats().escalations;
    detach();
    _exit(0);
}

static void test_hammer(void)
{
    struct hammer *h = mmap(NULL, sizeof *h, PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pid_t pid[HAMMER_PROCS];
    int k, ok = 1, bounded = 1, n;
    unsigned long long esc = 0;
    char v[8];

    if (h == MAP_FAILED)
        abort();
    memset(h, 0, sizeof *h);
    snprintf(v, sizeof v, "%d", HAMMER_ESCALATE);
    setenv("XAC_ESCALATE", v, 1);
    fflush(NULL);
    for (k = 0; k < HAMMER_PROCS; k++)
        if ((pid[k] = fork()) == 0)
            hammer(k, h);
    for (k = 0; k < HAMMER_PROCS; k++)
        ok &= tu_reap(pid[k]);
    test_cond("six processes, every policy, increment one page", ok);
    for (k = 0; k < HAMMER_PROCS; k++) {
        bounded &= h->max_attempts[k] <= HAMMER_ESCALATE + 1 &&
                   h->retries_max[k] <= HAMMER_ESCALATE;
        esc += h->escalations[k];
    }
    printf("# most attempts of one increment: %d (bound %d), %llu "
           "escalations\n", h->max_attempts[0], HAMMER_ESCALATE + 1, esc);
    test_cond("no increment took more than XAC_ESCALATE + 1 attempts",
              bounded);
    attach();
    E(xbeginQuery());
    n = *page(0);
    test_cond("no increment was lost",
              xendQuery() == COMMITTED && n == HAMMER_PROCS * HAMMER_INCS);
    detach();
    unsetenv("XAC_ESCALATE");
    munmap(h, sizeof *h);
}

/* ---- escalation, step by step ----------------------------------------- */

/* The escalating process: self-abort, XAC_ESCALATE=2.  Two attempts lose
 * page 0 to the holder; the third is irrevocable: it says 'i', waits for
 * 'g', writes page 0 (taking it from the holder), says 'w', waits for
 * 'c' and commits.  Then it reports its statistics. */
static void escalator(int hear, int tell)
{
    struct xac_conflict cf[4];
    struct xac_stats st;
    int rc, n;

    attach();
    E(xSetPolicy(XAC_POLICY_SELF_ABORT, 0));
    for (n = 0; n < 2; n++) {
        E(xbegin());
        *page(0) = 100 + n;
        if (xValidate() != FAILED || xend() != ABORTED)
            _exit(20);
    }
    E(xbegin());
    tu_tell(tell, 'i');
    if (tu_hear(hear) != 'g')
        _exit(21);
    *page(0) = 42;
    tu_tell(tell, xValidate() == PENDING ? 'w' : 'f');
    if (tu_hear(hear) != 'c')
        _exit(22);
    rc = xend();
    st = tu_stats();
    n = xConflicts(cf, 4);
    tu_tell(tell, rc == COMMITTED && st.escalations == 1 &&
                          st.conflict_aborts == 2 && st.retries_max == 2 &&
                          n == 1 && cf[0].page == 0 && cf[0].aborts == 2
                      ? 'y'
                      : 'n');
    detach();
    _exit(0);
}

/* A requester-wins process that writes page 0 while the escalator holds
 * it irrevocably: it must lose.  Says 'l' (lost) or 'W'. */
static void robber(int tell)
{
    attach();
    E(xSetPolicy(XAC_POLICY_REQUESTER_WINS, 0));
    E(xbegin());
    *page(0) = 7;
    tu_tell(tell, xValidate() == FAILED && xend() == ABORTED ? 'l' : 'W');
    detach();
    _exit(0);
}

/* Another writer whose commit must wait for the irrevocable one. */
static void bystander(int tell)
{
    attach();
    E(xbegin());
    *page(5) = 55;
    tu_tell(tell, xend() == COMMITTED ? 'd' : 'n');
    detach();
    _exit(0);
}

static void test_escalation(void)
{
    int p2e[2], e2p[2], r2p[2], b2p[2], rc;
    pid_t esc, rob, by;
    struct xac_conflict cf[2];

    setenv("XAC_ESCALATE", "2", 1);
    setenv("XAC_WRITERS", "4096", 1);
    attach();
    if (pipe(p2e) || pipe(e2p) || pipe(r2p) || pipe(b2p))
        abort();
    /* The holder (us): page 0's writer word, under self-abort. */
    E(xSetPolicy(XAC_POLICY_SELF_ABORT, 0));
    E(xbegin());
    *page(0) = 1;
    fflush(NULL);
    if ((esc = fork()) == 0)
        escalator(p2e[0], e2p[1]);
    test_cond("after two aborts the escalator runs irrevocable",
              tu_hear(e2p[0]) == 'i' && ctl()->ch_irrev != 0);
    tu_tell(p2e[1], 'g');
    test_cond("it takes the page from its holder although both self-abort",
              tu_hear(e2p[0]) == 'w');
    test_cond("the holder knows it lost", xValidate() == FAILED);
    fflush(NULL);
    if ((rob = fork()) == 0)
        robber(r2p[1]);
    test_cond("a requester-wins writer cannot take the page from it",
              tu_hear(r2p[0]) == 'l');
    fflush(NULL);
    if ((by = fork()) == 0)
        bystander(b2p[1]);
    await(&ctl()->ch_irrev_waiters, 1);
    test_cond("another commit waits for the irrevocable transaction",
              ctl()->ch_irrev != 0);
    tu_tell(p2e[1], 'c');
    test_cond("the irrevocable transaction commits, and counts it all",
              tu_hear(e2p[0]) == 'y');
    test_cond("then the waiting commit goes through",
              tu_hear(b2p[0]) == 'd');
    rc = xend();
    test_cond("the holder's transaction aborts", rc == ABORTED);
    test_cond("it blames page 0, which the escalator took",
              xConflicts(cf, 2) == 1 && cf[0].page == 0 &&
                  cf[0].aborts == 1);
    test_cond("every process finished",
              tu_reap(esc) && tu_reap(rob) && tu_reap(by));
    E(xbegin());
    rc = *page(0) == 42 && *page(5) == 55;
    test_cond("the file holds the irrevocable write and the waiting one",
              xend() == COMMITTED && rc);
    detach();
    unsetenv("XAC_ESCALATE");
    unsetenv("XAC_WRITERS");
}

/* ---- admission --------------------------------------------------------- */

/* Without XAC_WRITERS: a place per CPU and one more for nondurable
 * writers, two per CPU for durable ones (xcn_default_writers). */
static void test_default_places(void)
{
    unsigned cpus = xos_cpus();

    unsetenv("XAC_WRITERS");
    E(xInit("places-nondurable", NONDURABLE));
    test_cond("a nondurable process admits one more writer than its CPUs",
              tu_stats().writers == (int)cpus + 1);
    E(xShutdown());
    E(xInit("places-durable", DURABLE));
    test_cond("a durable process admits twice as many writers as its CPUs",
              tu_stats().writers == 2 * (int)cpus);
    E(xShutdown());
}

/* Attach with one place for writers, left at every commit (no turns);
 * open the pipe c2p; return a zeroed word of `bytes' shared with the
 * children. */
static void *one_place(size_t bytes, int c2p[2])
{
    void *shared = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);

    if (shared == MAP_FAILED || pipe(c2p) != 0)
        abort();
    setenv("XAC_WRITERS", "1", 1);
    setenv("XAC_TURN_US", "0", 1);
    attach();
    return shared;
}

/* Undo one_place. */
static void end_one_place(void *shared, size_t bytes, int c2p[2])
{
    detach();
    munmap(shared, bytes);
    close(c2p[0]);
    close(c2p[1]);
    unsetenv("XAC_WRITERS");
    unsetenv("XAC_TURN_US");
}

static volatile int *inside; /* shared: the second writer got in */

/* A child that writes page pg in one transaction (setting *mark, if
 * given, once inside it) and says after it committed how it got its
 * place: 't' took it over from a process between two transactions, 'o'
 * waited and then ran anyway (no admitted writer finished for about
 * 20 ms), 'w' waited until admitted, 'd' did not wait; 'n' it did not
 * commit.  Then it leaves. */
static void writer_child(int tell, int pg, volatile int *mark)
{
    struct xac_stats st;

    attach();
    E(xbegin());
    if (mark != NULL)
        *mark = 1;
    *page(pg) = pg;
    if (xend() != COMMITTED) {
        tu_tell(tell, 'n');
        _exit(0);
    }
    st = tu_stats();
    tu_tell(tell, st.admission_taken_over > 0 ? 't'
                  : st.admission_overruns > 0 ? 'o'
                  : st.admission_waits > 0    ? 'w'
                                              : 'd');
    detach();
    _exit(0);
}

static void test_admission(void)
{
    int c2p[2], st, early;
    pid_t pid;
    char c;

    inside = one_place(sizeof *inside, c2p);
    test_cond("XAC_WRITERS=1 is in effect", tu_stats().writers == 1);

    /* A second writer waits while we run. */
    *inside = 0;
    E(xbegin());
    *page(2) = 2;
    fflush(NULL);
    if ((pid = fork()) == 0)
        writer_child(c2p[1], 3, inside);
    await(&ctl()->ch_admit_waiters, 1);
    early = *inside;
    test_cond("we commit", xend() == COMMITTED);
    c = tu_hear(c2p[0]);
    /* Unless we were descheduled for 20 ms meanwhile (then it ran anyway,
     * and says so), it was not inside before we committed. */
    test_cond("a second writer waited to be admitted, and then ran",
              (c == 'w' && early == 0) || c == 'o');
    test_cond("it finished", tu_reap(pid) && *inside == 1);

    /* We wait for a writer that waits for us: it runs after all. */
    *inside = 0;
    E(xbegin());
    *page(4) = 4;
    fflush(NULL);
    if ((pid = fork()) == 0)
        writer_child(c2p[1], 5, inside);
    c = tu_hear(c2p[0]);
    test_cond("a writer the admitted one waits for runs after all, and "
              "counts it",
              c == 'o' && *inside == 1);
    test_cond("and both commit", xend() == COMMITTED && tu_reap(pid));

    /* An admitted writer dies: the next one is not held up for good. */
    fflush(NULL);
    if ((pid = fork()) == 0) {
        attach();
        E(xbegin());
        *page(6) = 6;
        tu_tell(c2p[1], 'a');
        pause();
        _exit(0);
    }
    test_cond("a writer is admitted", tu_hear(c2p[0]) == 'a' &&
                                          ctl()->ch_writers == 1);
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    E(xbegin());
    *page(7) = 7;
    test_cond("after it died, the next writer runs and commits",
              xend() == COMMITTED);
    test_cond("and the count of admitted writers is back to 0",
              ctl()->ch_writers == 0);
    end_one_place((void *)inside, sizeof *inside, c2p);
}

/* ---- turns -------------------------------------------------------------- */

static uint32_t my_place(void)
{
    struct xctl *cx = &xac_env.xe_ctl;

    return __atomic_load_n(&xctl_slots(cx)[cx->cx_slot].cs_admitted,
                           __ATOMIC_SEQ_CST);
}

static void test_turns(void)
{
    struct xac_stats st;
    int c2p[2], status;
    pid_t pid;

    if (pipe(c2p) != 0)
        abort();
    setenv("XAC_WRITERS", "1", 1);
    setenv("XAC_TURN_US", "1000000", 1); /* 1 s: longer than the steps */
    attach();
    test_cond("XAC_TURN_US=1000000 is in effect",
              tu_stats().turn_us == 1000000);

    E(xbegin());
    *page(8) = 1;
    test_cond("a writer commits", xend() == COMMITTED);
    test_cond("within its turn it holds its place between transactions",
              my_place() == XA_HELD && ctl()->ch_writers == 1);
    E(xbegin());
    *page(8) = 2;
    st = tu_stats();
    test_cond("its next transaction keeps the place without waiting",
              my_place() == XA_IN && st.admission_turn_kept == 1 &&
                  st.admission_waits == 0);
    test_cond("and commits", xend() == COMMITTED);

    /* Another writer comes while the place is held. */
    fflush(NULL);
    if ((pid = fork()) == 0)
        writer_child(c2p[1], 9, NULL);
    test_cond("a writer that comes between our transactions takes the "
              "place over, and commits",
              tu_hear(c2p[0]) == 't');
    test_cond("it finished", tu_reap(pid));
    test_cond("it gave the place up when it left; ours is gone",
              ctl()->ch_writers == 0 && my_place() == XA_OUT);
    E(xbegin());
    *page(8) = 3;
    st = tu_stats();
    test_cond("so our next transaction is admitted anew",
              my_place() == XA_IN && st.admission_turn_kept == 1);
    test_cond("and commits", xend() == COMMITTED);

    /* A turn of 1 ms, over at the commit. */
    detach();
    setenv("XAC_TURN_US", "1000", 1);
    attach();
    E(xbegin());
    *page(8) = 4;
    usleep(5000);
    test_cond("a commit after the turn leaves the count",
              xend() == COMMITTED && ctl()->ch_writers == 0 &&
                  my_place() == XA_OUT);

    /* A process dies holding its place: the place is taken over. */
    fflush(NULL);
    if ((pid = fork()) == 0) {
        setenv("XAC_TURN_US", "1000000", 1);
        attach();
        E(xbegin());
        *page(10) = 10;
        if (xend() != COMMITTED)
            _exit(1);
        tu_tell(c2p[1], 'h');
        pause();
        _exit(0);
    }
    test_cond("a writer holds its place between transactions",
              tu_hear(c2p[0]) == 'h' && ctl()->ch_writers == 1);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    E(xbegin());
    *page(8) = 5;
    st = tu_stats();
    test_cond("after it died, the next writer has its place",
              my_place() == XA_IN && ctl()->ch_writers == 1);
    test_cond("and commits", xend() == COMMITTED);
    detach();
    close(c2p[0]);
    close(c2p[1]);
    unsetenv("XAC_WRITERS");
    unsetenv("XAC_TURN_US");
}

/* Attach with XAC_ESCALATE=escalate and every writer admitted, open the
 * pipe c2p, and begin a self-abort transaction that writes page 0: ours
 * until it ends. */
static void begin_holding_page0(const char *escalate, int c2p[2])
{
    setenv("XAC_ESCALATE", escalate, 1);
    setenv("XAC_WRITERS", "4096", 1);
    attach();
    if (pipe(c2p) != 0)
        abort();
    E(xSetPolicy(XAC_POLICY_SELF_ABORT, 0));
    E(xbegin());
    *page(0) = 1;
}

/* Undo begin_holding_page0 (its transaction has ended). */
static void end_holding(int c2p[2])
{
    detach();
    close(c2p[0]);
    close(c2p[1]);
    unsetenv("XAC_ESCALATE");
    unsetenv("XAC_WRITERS");
}

/* An irrevocable transaction's process dies: commits wait no more. */
static void test_dead_irrevocable(void)
{
    int c2p[2], st;
    pid_t pid;

    begin_holding_page0("1", c2p);
    fflush(NULL);
    if ((pid = fork()) == 0) {
        attach();
        E(xSetPolicy(XAC_POLICY_SELF_ABORT, 0));
        E(xbegin());
        *page(0) = 2; /* loses: we hold it */
        if (xend() != ABORTED)
            _exit(20);
        E(xbegin()); /* irrevocable */
        tu_tell(c2p[1], 'i');
        pause();
        _exit(0);
    }
    test_cond("a process runs irrevocable", tu_hear(c2p[0]) == 'i' &&
                                                ctl()->ch_irrev != 0);
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    test_cond("after it died, a commit that waited for it goes through",
              xend() == COMMITTED);
    test_cond("and the token is free", ctl()->ch_irrev == 0);
    end_holding(c2p);
}

/* ---- a loser sleeps until its rival ends --------------------------------- */

static long (*real_futex)(uint32_t *, int, uint32_t, const struct timespec *);
static uint32_t *watched; /* the rival's word */
static int spy_tell = -1, nwaits, nwakes;

/* The loser's futex: a wait on the rival's word is told to the rival
 * (who then ends its transaction), then done. */
static long loser_futex(uint32_t *w, int op, uint32_t val,
                        const struct timespec *ts)
{
    if (op == FUTEX_WAIT && w == watched) {
        nwaits++;
        tu_tell(spy_tell, 's');
    }
    return real_futex(w, op, val, ts);
}

/* The rival's futex: counts the wakes on its own word. */
static long rival_futex(uint32_t *w, int op, uint32_t val,
                        const struct timespec *ts)
{
    if (op == FUTEX_WAKE && w == watched)
        nwakes++;
    return real_futex(w, op, val, ts);
}

static void test_rival_sleep(void)
{
    int c2p[2];
    uint32_t mine;
    pid_t pid;

    begin_holding_page0("0", c2p); /* no escalation: the wait follows */
    mine = xac_env.xe_ctl.cx_slot;
    watched = xctl_txn_word(&xctl_slots(&xac_env.xe_ctl)[mine]);
    real_futex = xos.futex;
    fflush(NULL);
    if ((pid = fork()) == 0) {
        int rc;
        attach();
        /* The same file at the same offset: our pointer is its too. */
        watched = xctl_txn_word(&xctl_slots(&xac_env.xe_ctl)[mine]);
        spy_tell = c2p[1];
        xos.futex = loser_futex;
        E(xSetPolicy(XAC_POLICY_SELF_ABORT, 0));
        E(xbegin());
        *page(0) = 2; /* loses: the parent holds it */
        rc = xend();
        xos.futex = real_futex;
        tu_tell(c2p[1], rc == ABORTED && nwaits >= 1 ? 'a' : 'n');
        detach();
        _exit(0);
    }
    test_cond("the loser sleeps on the word of its rival's transaction",
              tu_hear(c2p[0]) == 's');
    test_cond("counted as a rival sleeper in the control file",
              ctl()->ch_rival_sleepers == 1);
    nwakes = 0;
    xos.futex = rival_futex;
    test_cond("the rival commits", xend() == COMMITTED);
    xos.futex = real_futex;
    test_cond("and its end wakes the sleeper", nwakes == 1);
    test_cond("whose transaction then ends aborted", tu_hear(c2p[0]) == 'a');
    test_cond("and it exits cleanly", tu_reap(pid));
    test_cond("nobody sleeps any longer", ctl()->ch_rival_sleepers == 0);
    nwakes = 0;
    xos.futex = rival_futex;
    E(xbegin());
    *page(1) = 3;
    test_cond("a commit with no sleeper", xend() == COMMITTED);
    xos.futex = real_futex;
    test_cond("wakes nobody (no system call)", nwakes == 0);
    end_holding(c2p);
}

/* ---- an admission waiter sleeps long ------------------------------------ */

/* A child that attaches, takes admission through the futex hook given,
 * writes page 11 and tells the parent on tell whether it committed ('c')
 * or not ('n').  Returns its pid. */
static pid_t fork_writer(long (*futex)(uint32_t *, int, uint32_t,
                                       const struct timespec *),
                         int tell)
{
    pid_t pid;

    real_futex = xos.futex;
    fflush(NULL);
    if ((pid = fork()) == 0) {
        int rc;
        attach();
        xos.futex = futex;
        E(xbegin());
        *page(11) = 11;
        rc = xend();
        xos.futex = real_futex;
        tu_tell(tell, rc == COMMITTED ? 'c' : 'n');
        detach();
        _exit(0);
    }
    return pid;
}

static volatile long *first_nap; /* shared: the waiter's first nap, ns */

/* The waiter's futex: notes how long its first admission nap may last. */
static long waiter_futex(uint32_t *w, int op, uint32_t val,
                         const struct timespec *ts)
{
    if (op == FUTEX_WAIT && w == &ctl()->ch_admit_seq && ts != NULL &&
        *first_nap == 0)
        *first_nap = ts->tv_sec * 1000000000L + ts->tv_nsec;
    return real_futex(w, op, val, ts);
}

/* A freed place wakes a waiter, so a waiter's nap only has to run out to
 * look for writers that stopped finishing: 10 ms, not 2 (with 2 ms, 60
 * waiting processes woke once per insert).  Dead writers are still
 * looked for after 10 ms and left behind after 20 (test_admission). */
static void test_admission_nap(void)
{
    int c2p[2];
    pid_t pid;

    first_nap = one_place(sizeof *first_nap, c2p);
    E(xbegin());
    *page(10) = 10; /* we hold the only place */
    pid = fork_writer(waiter_futex, c2p[1]);
    while (*first_nap == 0)
        usleep(100);
    test_cond("a writer that finds no place sleeps at least 10 ms at a time",
              *first_nap >= 10000000L && *first_nap < 1000000000L);
    test_cond("we commit", xend() == COMMITTED);
    test_cond("and the place we leave wakes it: it commits",
              tu_hear(c2p[0]) == 'c' && tu_reap(pid));
    end_one_place((void *)first_nap, sizeof *first_nap, c2p);
}

/* ---- a turn that ends hands the place over ------------------------------ */

struct handoff {
    volatile int yielded;  /* the parent called sched_yield at admission */
    volatile int wait;     /* the woken waiter stays away until then */
    volatile int late_ms;  /* ... and this much longer */
    volatile int delayed;  /* it did (once) */
};
static struct handoff *ho;
static int (*real_yield)(void);

static int parent_yield(void)
{
    ho->yielded = 1;
    return real_yield();
}

/* The waiter's futex: woken from its first admission nap, it stays away
 * (still counted as a waiter, the place still free) until the process that
 * woke it yields (at most 2 s), then ho->late_ms more. */
static long late_futex(uint32_t *w, int op, uint32_t val,
                       const struct timespec *ts)
{
    long rc = real_futex(w, op, val, ts);
    int i;

    if (op == FUTEX_WAIT && w == &ctl()->ch_admit_seq && ho->wait &&
        !ho->delayed) {
        ho->delayed = 1;
        for (i = 0; i < 20000 && !ho->yielded; i++)
            usleep(100);
        usleep((useconds_t)ho->late_ms * 1000u);
    }
    return rc;
}

/* We hold the only place (XAC_WRITERS=1, turns of 1 ms, XAC_HANDOFF_US
 * bound_us) when a writer comes; our turn ends at our commit, and we begin
 * again.  Returns our next transaction's reading of the writer's page (11
 * once it committed) and our statistics in *st. */
static int handoff_case(const char *bound_us, int wait, int late_ms,
                        struct xac_stats *st)
{
    int c2p[2], seen;
    pid_t pid;

    memset((void *)ho, 0, sizeof *ho);
    ho->wait = wait;
    ho->late_ms = late_ms;
    if (pipe(c2p) != 0)
        abort();
    setenv("XAC_HANDOFF_US", bound_us, 1);
    setenv("XAC_WRITERS", "1", 1);
    setenv("XAC_TURN_US", "1000", 1);
    attach();
    E(xbegin());
    *page(10) = 1;
    *page(11) = 0; /* the waiter's page, from an earlier case */
    pid = fork_writer(late_futex, c2p[1]);
    await(&ctl()->ch_admit_waiters, 1);
    usleep(3000); /* our turn is over */
    test_cond("the holder commits; its turn is over", xend() == COMMITTED);
    real_yield = xos.sched_yield;
    xos.sched_yield = parent_yield;
    E(xbegin());
    seen = *page(11);
    *page(10) = 2;
    test_cond("and its next transaction commits", xend() == COMMITTED);
    xos.sched_yield = real_yield;
    *st = tu_stats();
    test_cond("the waiter commits too", tu_hear(c2p[0]) == 'c' && tu_reap(pid));
    detach();
    close(c2p[0]);
    close(c2p[1]);
    unsetenv("XAC_WRITERS");
    unsetenv("XAC_TURN_US");
    unsetenv("XAC_HANDOFF_US");
    return seen;
}

static void test_handoff(void)
{
    struct xac_stats st;
    int seen;

    ho = mmap(NULL, sizeof *ho, PROT_READ | PROT_WRITE,
              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (ho == MAP_FAILED)
        abort();

    (void)handoff_case("10000", 1, 0, &st);
    test_cond("XAC_HANDOFF_US=10000 is in effect", st.handoff_us == 10000);
    test_cond("at its turn's end, with the woken waiter not in yet, the "
              "holder yields its CPU instead of sleeping",
              ho->yielded == 1 && st.admission_handoffs == 1);

    (void)handoff_case("0", 0, 0, &st);
    test_cond("with XAC_HANDOFF_US=0 it sleeps at once: no yield",
              st.handoff_us == 0 && ho->yielded == 0 &&
                  st.admission_handoffs == 0);

    /* A waiter that stays away 500 ms after the yield: the holder stops
     * yielding after 1 ms, sleeps, and finding no one in the place takes
     * it back (after its 10 ms nap): it runs before the waiter. */
    seen = handoff_case("1000", 1, 500, &st);
    test_cond("a waiter that does not come holds nobody up for long: the "
              "holder yielded, then ran before it",
              ho->yielded == 1 && st.admission_handoffs == 1 && seen == 0);
    munmap((void *)ho, sizeof *ho);
}

int main(void)
{
    tu_tmpdir();
    test_hammer();
    test_escalation();
    test_default_places();
    test_admission();
    test_turns();
    test_dead_irrevocable();
    test_rival_sleep();
    test_admission_nap();
    test_handoff();
    return test_report();
}
