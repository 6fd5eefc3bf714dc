/* xac_contend.c: contention management (xac_contend.h). */
#include "xac_contend.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <time.h>

#include "xac_assert.h"
#include "xac_os.h"

/* How long a waiter for the irrevocable token sleeps before it looks
 * for a dead holder (a live one wakes every waiter when it is done). */
#define XCN_NAP_NS 2000000L
/* How long an admission waiter sleeps before it looks again.  A place
 * that frees wakes a waiter (leave_count); a writer that keeps its place
 * between transactions only bumps ch_admit_seq.  So a nap that runs out
 * finds nothing to do unless the writers stopped finishing.  With 2 ms
 * naps, 60 of 64 processes waiting on 2 CPUs woke about 30 times a
 * millisecond, once per insert, each wake-up taking a CPU from a writer
 * (docs/benchmarks-scaling.md, "Waiters that sleep"). */
#define XCN_ADMIT_NAP_NS 10000000L
/* An admission waiter that saw no admitted writer finish for this many
 * naps (10 ms) looks for dead ones (reading /proc for every slot: not
 * something to do every nap); after twice as many
 * (20 ms) it gives up waiting and runs: the writers may be waiting for
 * it (a program that holds transactions open across processes). */
#define XCN_STUCK_NAPS 1

static struct xctl_slot *myslot(struct xctl *cx)
{
    return &xctl_slots(cx)[cx->cx_slot];
}

/* The default number of places.  Nondurable: one per CPU and one more.  A
 * nondurable writer rarely sleeps inside its transaction (it spins for the
 * commit lock, held for microseconds), so places beyond that only make
 * admitted writers share CPUs and be preempted holding their place or the
 * lock; the one more runs while a writer waits in the kernel (the pool
 * file's lock, a page it reads).  On 2 CPUs, 3 places against 4: test A
 * of concurrency_test at 64 processes 1.07-1.26 x one process against
 * 0.70-0.94, the trees' nondurable inserts unchanged at 4 to 64
 * processes, while 2 places cost them 14 % at 8.  Durable: twice the
 * CPUs, as before; a durable writer waits for the log's sync
 * (docs/benchmarks-scaling.md, "A place per CPU, and one more"). */
unsigned xcn_default_writers(int durable)
{
    return durable ? 2u * xos_cpus() : xos_cpus() + 1u;
}

void xcn_init(struct xcontend *cn, unsigned writers, int durable,
              unsigned turn_us, unsigned escalate, unsigned backoff_us,
              uint64_t seed)
{
    memset(cn, 0, sizeof *cn);
    cn->cn_writers = writers != 0 ? writers : xcn_default_writers(durable);
    cn->cn_turn_us = turn_us;
    cn->cn_escalate = escalate;
    cn->cn_backoff_us = backoff_us;
    cn->cn_rand = seed;
}

/* Sleep on futex word w while it holds seq, at most ns (below 1 s),
 * counted in *waiters.  1 if it timed out (nothing woke us). */
static int nap(uint32_t *w, uint32_t seq, uint32_t *waiters, long ns)
{
    struct timespec ts = {0, ns};
    long rc;

    __atomic_fetch_add(waiters, 1, __ATOMIC_SEQ_CST);
    rc = xos.futex(w, FUTEX_WAIT, seq, &ts);
    __atomic_fetch_sub(waiters, 1, __ATOMIC_SEQ_CST);
    return rc != 0 && errno == ETIMEDOUT;
}

/* The holder of a lock word in the control file may have died: reap dead
 * slots (which frees what they held, xctl_forget_contention).  Looked for
 * first without ch_lock, which the writers we wait for need. */
static void reap(struct xctl *cx)
{
    if (!xctl_any_dead(cx, UINT32_MAX))
        return;
    xctl_lock(cx);
    xctl_reap(cx);
    xctl_unlock(cx);
}

/* ---- admission ------------------------------------------------------- */

/* Take over the place of a process between two transactions of its turn:
 * the count stays, the flag moves to us (ours first, so that a death in
 * between leaves the count low, never high). */
static int take_over(struct xcontend *cn, struct xctl *cx)
{
    struct xctl_slot *s = xctl_slots(cx), *me = myslot(cx);
    uint32_t i, held, hwm = LD(&cx->cx_hdr->ch_slot_hwm);

    for (i = 0; i < hwm; i++) {
        if (i == cx->cx_slot || LD(&s[i].cs_admitted) != XA_HELD)
            continue;
        ST(&me->cs_admitted, XA_IN);
        held = XA_HELD;
        if (__atomic_compare_exchange_n(&s[i].cs_admitted, &held, XA_OUT,
                                        0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST)) {
            cn->cn_taken_over++;
            return 1;
        }
        ST(&me->cs_admitted, XA_OUT);
    }
    return 0;
}

/* Our turn ended and we woke a waiter (leave_count), which has not taken
 * the place yet: yield the CPU to it while the place is free, for at most
 * cn_handoff_ns (a clock that fails ends it too).  1 if the places
 * filled.  If they did not, the caller takes the place back and runs on:
 * a woken waiter is often queued behind a running writer on the other
 * CPU, and sleeping meanwhile left this CPU idle.  That is where the
 * throughput comes from, and its price is fairness: the waiter, passed
 * over, sleeps again (docs/benchmarks-scaling.md, "Handing the place
 * over").  Only the process whose turn just ended does this, once. */
static int hand_over(struct xcontend *cn, struct xctl_hdr *h, int32_t lim)
{
    uint64_t t0 = xos_now_ns(), t = t0;

    cn->cn_handoffs++;
    while (LD(&h->ch_writers) < lim && t != 0 && t - t0 < cn->cn_handoff_ns) {
        xos.sched_yield();
        t = xos_now_ns();
    }
    return LD(&h->ch_writers) >= lim;
}

/* A slot's cs_admitted is set before it counts in ch_writers and cleared
 * after it left, so a process that dies is taken out at most once too
 * often (the count reads low: one writer too many runs), never too
 * rarely (no place is lost for good). */
static void admit(struct xcontend *cn, struct xctl *cx)
{
    struct xctl_hdr *h = cx->cx_hdr;
    struct xctl_slot *me = myslot(cx);
    int32_t w, lim = (int32_t)cn->cn_writers;
    uint64_t t0 = 0;
    uint32_t seq;
    int stuck = 0, yielding;

    if (cn->cn_writers == 0)
        return;
    for (;;) {
        seq = LD(&h->ch_admit_seq);
        w = LD(&h->ch_writers);
        /* At the end of its turn a process lets a waiter in first: it
         * woke one, which has not run yet. */
        if (cn->cn_yield && LD(&h->ch_admit_waiters) == 0)
            cn->cn_yield = 0;
        if (w < lim && !cn->cn_yield) {
            ST(&me->cs_admitted, XA_IN);
            if (__atomic_compare_exchange_n(&h->ch_writers, &w, w + 1, 0,
                                            __ATOMIC_SEQ_CST,
                                            __ATOMIC_SEQ_CST))
                break;
            ST(&me->cs_admitted, XA_OUT);
            continue;
        }
        if (!cn->cn_yield && take_over(cn, cx))
            break;
        if (t0 == 0) {
            t0 = xos_now_ns();
            cn->cn_admit_waits++;
        }
        yielding = cn->cn_yield;
        cn->cn_yield = 0;
        if (yielding && cn->cn_handoff_ns != 0) {
            /* The waiter did not come in time: the place is ours again. */
            if (!hand_over(cn, h, lim))
                continue;
            /* It did: sleep like any waiter, on the sequence as it is
             * now (commits bumped it while we yielded; on the old one the
             * nap would return at once and we would take a place over
             * from a process in the middle of its turn). */
            seq = LD(&h->ch_admit_seq);
        }
        if (!nap(&h->ch_admit_seq, seq, &h->ch_admit_waiters,
                 XCN_ADMIT_NAP_NS)) {
            stuck = 0;
            continue;
        }
        if (LD(&h->ch_admit_seq) != seq) {
            stuck = 0;
            continue;
        }
        if (++stuck == XCN_STUCK_NAPS)
            reap(cx); /* a writer that died is no longer waited for */
        if (stuck >= 2 * XCN_STUCK_NAPS) {
            cn->cn_admit_overruns++;
            ST(&me->cs_admitted, XA_IN);
            __atomic_fetch_add(&h->ch_writers, 1, __ATOMIC_SEQ_CST);
            break;
        }
    }
    cn->cn_admitted = 1;
    cn->cn_turn_t0 = xos_now_ns();
    if (t0 != 0)
        cn->cn_admit_ns += xos_now_ns() - t0;
}

/* The place held since the last transaction, if no one took it over (our
 * slot says XA_HELD only then: only we set it, only takers clear it). */
static int resume(struct xcontend *cn, struct xctl *cx)
{
    uint32_t held = XA_HELD;

    if (!__atomic_compare_exchange_n(&myslot(cx)->cs_admitted, &held, XA_IN,
                                     0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
        return 0;
    cn->cn_admitted = 1;
    cn->cn_turn_kept++;
    return 1;
}

/* Hold the place between two transactions of the turn.  The count and
 * the waiters stay as they are; the bump tells them writers still
 * finish (after 2 * XCN_STUCK_NAPS naps without one they run anyway). */
static void hold(struct xcontend *cn, struct xctl *cx)
{
    cn->cn_admitted = 0;
    ST(&myslot(cx)->cs_admitted, XA_HELD);
    __atomic_fetch_add(&cx->cx_hdr->ch_admit_seq, 1, __ATOMIC_SEQ_CST);
}

/* Leave the count, waking a waiter; `from' is what our flag must be
 * (XA_HELD: unless another process took the place over meanwhile). */
static void leave_count(struct xctl *cx, uint32_t from)
{
    struct xctl_hdr *h = cx->cx_hdr;

    if (!__atomic_compare_exchange_n(&myslot(cx)->cs_admitted, &from, XA_OUT,
                                     0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
        return;
    __atomic_fetch_sub(&h->ch_writers, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&h->ch_admit_seq, 1, __ATOMIC_SEQ_CST);
    if (LD(&h->ch_admit_waiters) != 0)
        xos.futex(&h->ch_admit_seq, FUTEX_WAKE, 1, NULL);
}

static void unadmit(struct xcontend *cn, struct xctl *cx)
{
    if (!cn->cn_admitted)
        return;
    cn->cn_admitted = 0;
    leave_count(cx, XA_IN);
}

void xcn_release(struct xctl *cx)
{
    leave_count(cx, XA_HELD); /* a no-op unless our slot holds a place */
}

/* ---- the irrevocable token ------------------------------------------- */

/* Wait until the token is free or held by us; a timed-out nap reaps, in
 * case its holder died. */
static void wait_token(struct xcontend *cn, struct xctl *cx)
{
    struct xctl_hdr *h = cx->cx_hdr;
    uint32_t seq, holder, mine = cx->cx_slot + 1;
    uint64_t t0 = xos_now_ns();

    for (;;) {
        seq = LD(&h->ch_irrev_seq);
        holder = LD(&h->ch_irrev);
        if (holder == 0 || holder == mine)
            break;
        if (nap(&h->ch_irrev_seq, seq, &h->ch_irrev_waiters, XCN_NAP_NS) &&
            !xctl_slot_alive(&xctl_slots(cx)[holder - 1]))
            reap(cx);
    }
    cn->cn_irrev_ns += xos_now_ns() - t0;
}

void xcn_wait_irrevocable(struct xcontend *cn, struct xctl *cx)
{
    wait_token(cn, cx);
}

static void take_token(struct xcontend *cn, struct xctl *cx)
{
    struct xctl_hdr *h = cx->cx_hdr;
    uint32_t free_, mine = cx->cx_slot + 1;

    for (;;) {
        free_ = 0;
        if (__atomic_compare_exchange_n(&h->ch_irrev, &free_, mine, 0,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            break;
        wait_token(cn, cx);
    }
    cn->cn_irrevocable = 1;
    cn->cn_escalations++;
    /* A commit that saw the token free before it was ours publishes under
     * ch_lock: once we held the lock, every such commit is in the
     * snapshot we take next, and every later one waits for us. */
    xctl_lock(cx);
    xctl_unlock(cx);
}

static void give_token(struct xcontend *cn, struct xctl *cx)
{
    struct xctl_hdr *h = cx->cx_hdr;

    if (!cn->cn_irrevocable)
        return;
    cn->cn_irrevocable = 0;
    /* Ours until now: only we (or the reaper, for the dead) free it. */
    XASSERT(LD(&h->ch_irrev) == cx->cx_slot + 1);
    ST(&h->ch_irrev_txn, 0);
    ST(&h->ch_irrev, 0);
    __atomic_fetch_add(&h->ch_irrev_seq, 1, __ATOMIC_SEQ_CST);
    if (LD(&h->ch_irrev_waiters) != 0)
        xos.futex(&h->ch_irrev_seq, FUTEX_WAKE, INT_MAX, NULL);
}

/* ---- a transaction's life -------------------------------------------- */

void xcn_enter(struct xcontend *cn, struct xctl *cx)
{
    cn->cn_blamed = 0;
    cn->cn_rival_id = 0;
    if (cn->cn_escalate != 0 && cn->cn_streak >= cn->cn_escalate) {
        xcn_release(cx);
        take_token(cn, cx); /* not admitted: one writer above the limit */
    } else if (!resume(cn, cx)) {
        admit(cn, cx);
    }
    cn->cn_t0 = xos_now_ns();
}

void xcn_began(struct xcontend *cn, struct xctl *cx, uint64_t id)
{
    if (cn->cn_irrevocable)
        ST(&cx->cx_hdr->ch_irrev_txn, id);
}

void xcn_leave(struct xcontend *cn, struct xctl *cx, int may_hold)
{
    uint64_t turn_ns = (uint64_t)cn->cn_turn_us * 1000u;

    if (cn->cn_admitted && may_hold && turn_ns != 0 &&
        xos_now_ns() - cn->cn_turn_t0 < turn_ns) {
        hold(cn, cx);
    } else if (cn->cn_admitted) {
        unadmit(cn, cx);
        /* The turn is over: the next one is a waiter's. */
        cn->cn_yield = turn_ns != 0;
    }
    give_token(cn, cx);
}

/* Count a conflict abort blamed on page pg1 - 1 (pg1 0: unknown). */
static void count_page(struct xcontend *cn, uint32_t pg1)
{
    uint32_t i, h;

    if (pg1 == 0) {
        cn->cn_untracked++;
        return;
    }
    h = pg1 * 2654435761u;
    for (i = 0; i < XCN_PAGES; i++) {
        struct xcn_page *p = &cn->cn_pages[(h + i) & (XCN_PAGES - 1)];
        if (p->cp_pg1 == pg1) {
            p->cp_aborts++;
            return;
        }
        if (p->cp_pg1 == 0) {
            if (cn->cn_npages + 1 >= XCN_PAGES) /* keep one empty */
                break;
            p->cp_pg1 = pg1;
            p->cp_aborts = 1;
            cn->cn_npages++;
            return;
        }
    }
    cn->cn_untracked++;
}

/* Lost a page to a running transaction: the next attempt would lose it
 * again until that transaction ends, and, retried at once, aborts over
 * and over (64 durable processes on 2 CPUs: one insert retried 110
 * times while its rival, preempted, held the page).  So sleep until the
 * rival's slot runs another transaction or none, at most XCN_RIVAL_NS,
 * on the futex word of its cs_txn (the rival's xcm_end wakes us: a loop
 * of sched_yield here took 2 of every 100 CPU samples at 64 processes,
 * and its CPU from the rival).  After the abort only: the slot is no
 * longer admitted. */
#define XCN_RIVAL_NS 10000000ull
static void await_rival(struct xcontend *cn, struct xctl *cx)
{
    struct xctl_slot *s = &xctl_slots(cx)[cn->cn_rival_slot];
    uint64_t t0, t;

    if (cn->cn_rival_id == 0)
        return;
    t0 = xos_now_ns();
    for (t = t0; LD(&s->cs_txn) == cn->cn_rival_id &&
                 t - t0 < XCN_RIVAL_NS && t != 0;
         t = xos_now_ns())
        (void)nap(xctl_txn_word(s), (uint32_t)cn->cn_rival_id,
                  &cx->cx_hdr->ch_rival_sleepers,
                  (long)(XCN_RIVAL_NS - (t - t0)));
    cn->cn_backoff_ns += xos_now_ns() - t0;
    cn->cn_rival_id = 0;
}

/* Randomized exponential backoff: up to min(cn_backoff_us, 2^k us). */
static void backoff(struct xcontend *cn, unsigned k, uint32_t salt)
{
    uint64_t lim, us, t0;
    struct timespec ts;

    if (cn->cn_backoff_us == 0)
        return;
    lim = (uint64_t)1 << (k < 30 ? k : 30);
    if (lim > cn->cn_backoff_us)
        lim = cn->cn_backoff_us;
    cn->cn_rand = cn->cn_rand * 6364136223846793005ULL +
                  1442695040888963407ULL + salt;
    us = (cn->cn_rand >> 33) % (lim + 1);
    ts.tv_sec = (time_t)(us / 1000000);
    ts.tv_nsec = (long)(us % 1000000) * 1000L;
    t0 = xos_now_ns();
    xos.nanosleep(&ts, NULL);
    cn->cn_backoff_ns += xos_now_ns() - t0;
}

void xcn_end(struct xcontend *cn, struct xctl *cx, uint64_t id,
             int committed, int conflict)
{
    struct xctl_slot *me = myslot(cx);
    uint32_t pg1 = cn->cn_blamed;

    /* The progress guarantee: nothing aborts an irrevocable transaction
     * but its own program (xFail) or a full pool or log. */
    XASSERT(!(cn->cn_irrevocable && conflict));
    /* A commit keeps its place for the turn; an abort that waits for its
     * rival or backs off does not sleep on one. */
    xcn_leave(cn, cx, committed);
    if (committed) {
        if (cn->cn_streak > cn->cn_retry_max)
            cn->cn_retry_max = cn->cn_streak;
        cn->cn_streak = 0;
        return;
    }
    if (!conflict)
        return;
    cn->cn_aborts++;
    cn->cn_aborted_ns += xos_now_ns() - cn->cn_t0;
    /* Lost to a transaction that doomed us: it says on which page. */
    if (pg1 == 0 && LD(&me->cs_doom) == id)
        pg1 = LD(&me->cs_doom_pg);
    count_page(cn, pg1);
    cn->cn_streak++;
    /* The next attempt waits for the token instead. */
    if (cn->cn_escalate == 0 || cn->cn_streak < cn->cn_escalate) {
        await_rival(cn, cx);
        backoff(cn, cn->cn_streak, cx->cx_slot);
    }
    cn->cn_rival_id = 0;
}
