/* xac_contend.h: contention management (xac_contend.c): what makes this
 * process's transactions abort and what it costs, and the three things
 * that keep many writers from aborting each other without end:
 *
 * - admission (XAC_WRITERS): at most that many update transactions run
 *   at once; the others wait at xbegin, so on a machine with fewer CPUs
 *   than processes the running ones are not preempted in the middle and
 *   have few rivals.  A throttle, never a lock: a process waits only
 *   while admitted writers keep finishing.  An admitted process keeps its
 *   place for a turn (XAC_TURN_US) of transactions in a row: a place
 *   handed over at every commit woke a waiter that took the CPU from the
 *   committer, about three context switches per transaction with 64
 *   processes on 2 CPUs.  Between two transactions the place is held,
 *   and a waiter that comes looking takes it over.  At a turn's end the
 *   process yields its CPU to the waiter it woke (XAC_HANDOFF_US), and
 *   takes the place back if the waiter has not come by then.
 * - escalation (XAC_ESCALATE): after that many consecutive conflict
 *   aborts, the next attempt runs irrevocable.  It holds a token in the
 *   control file (ch_irrev) from before its snapshot to its commit; while
 *   it does, every other commit waits and no writer wins a page from it,
 *   so it commits: every transaction commits within XAC_ESCALATE + 1
 *   attempts (docs/libxac-serializability.md argues it).
 * - backoff (XAC_BACKOFF_US, xSetPolicy): a random sleep after an abort.
 *
 * It sees its own part of struct xac_env and the control file only.
 */
#ifndef XAC_CONTEND_H
#define XAC_CONTEND_H

#include <stdint.h>

#include "xac_atomic.h"
#include "xac_ctl.h"

/* Pages whose conflicts are counted one by one (a power of two); a
 * conflict on a page beyond them counts in cn_untracked. */
#define XCN_PAGES 4096u

struct xcn_page {
    uint32_t cp_pg1;     /* 1 + page number, 0 = empty entry */
    uint32_t cp_pad;
    uint64_t cp_aborts;  /* conflict aborts blamed on the page */
};

struct xcontend {
    /* Settings (xInit). */
    unsigned cn_writers;       /* XAC_WRITERS in effect, 0 = no limit */
    unsigned cn_escalate;      /* XAC_ESCALATE, 0 = never */
    unsigned cn_backoff_us;    /* maximum backoff, 0 = off (xSetPolicy) */
    uint64_t cn_rand;          /* backoff random state */
    /* The running transaction. */
    unsigned cn_turn_us;       /* XAC_TURN_US, 0 = no turns */
    uint64_t cn_handoff_ns;    /* XAC_HANDOFF_US in ns, 0 = sleep at once */
    int cn_admitted;           /* it counts in ch_writers */
    int cn_yield;              /* its turn ended: the next admission lets
                                * a waiter in first */
    uint64_t cn_turn_t0;       /* CLOCK_MONOTONIC ns its turn began */
    int cn_irrevocable;        /* it holds ch_irrev */
    uint32_t cn_blamed;        /* 1 + the page blamed for its failure */
    uint32_t cn_rival_slot;    /* the transaction it lost a page to, */
    uint64_t cn_rival_id;      /* ... by slot and id (0: none) */
    uint64_t cn_t0;            /* CLOCK_MONOTONIC ns at its begin */
    unsigned cn_streak;        /* conflict aborts since the last commit */
    /* Statistics (xStats, xConflicts). */
    unsigned long long cn_aborts;      /* conflict aborts */
    unsigned long long cn_retry_max;   /* largest streak a commit ended */
    unsigned long long cn_aborted_ns;  /* begin to end of those aborts */
    unsigned long long cn_backoff_ns;  /* slept in backoff */
    unsigned long long cn_escalations; /* irrevocable attempts */
    unsigned long long cn_admit_waits; /* begins that waited to be
                                        * admitted */
    unsigned long long cn_admit_ns;    /* ... and how long */
    unsigned long long cn_admit_overruns; /* ... and then ran unadmitted:
                                        * no admitted writer finished */
    unsigned long long cn_turn_kept;   /* begins in the place the previous
                                        * transaction held */
    unsigned long long cn_handoffs;    /* turn ends at which it yielded its
                                        * CPU to the waiter it woke */
    unsigned long long cn_taken_over;  /* begins in a place another
                                        * process held between two of its
                                        * transactions */
    unsigned long long cn_irrev_ns;    /* waited for another process's
                                        * irrevocable transaction */
    unsigned long long cn_untracked;   /* conflicts on pages the table had
                                        * no room for */
    unsigned cn_npages;                /* entries used in cn_pages */
    struct xcn_page cn_pages[XCN_PAGES];
};

/* Places when XAC_WRITERS is 0: one more than the CPUs this process may
 * run on, twice the CPUs for a durable process. */
unsigned xcn_default_writers(int durable);
/* Settings from xInit (writers 0: xcn_default_writers(durable)). */
void xcn_init(struct xcontend *cn, unsigned writers, int durable,
              unsigned turn_us, unsigned escalate, unsigned backoff_us,
              uint64_t seed);
/* Outermost update transaction, before its snapshot: become irrevocable
 * if it is due (waiting for the token), else wait to be admitted. */
void xcn_enter(struct xcontend *cn, struct xctl *cx);
/* Its id is drawn: an irrevocable transaction publishes it. */
void xcn_began(struct xcontend *cn, struct xctl *cx, uint64_t id);
/* With ch_lock held, at commit: is another process's transaction
 * irrevocable (so that this commit must wait for it)? */
static inline int xcn_blocked(const struct xcontend *cn,
                              const struct xctl *cx)
{
    uint32_t holder = LD(&cx->cx_hdr->ch_irrev);

    return holder != 0 && !cn->cn_irrevocable;
}
/* Without ch_lock: wait until no transaction is irrevocable (or its
 * process died). */
void xcn_wait_irrevocable(struct xcontend *cn, struct xctl *cx);
/* Is the transaction with this id the irrevocable one?  Async-signal-
 * safe. */
static inline int xcn_is_irrevocable(const struct xctl *cx, uint64_t id)
{
    uint64_t t = LD(&cx->cx_hdr->ch_irrev_txn);

    return t != 0 && t == id;
}
/* The transaction published (or ends): free the token, and leave the
 * admitted writers, or, if may_hold and its turn is not over, hold its
 * place for the next transaction.  Idempotent. */
void xcn_leave(struct xcontend *cn, struct xctl *cx, int may_hold);
/* Detaching: give up a place held between transactions. */
void xcn_release(struct xctl *cx);
/* Blame page pg for the running transaction's failure; the first blame
 * counts.  Async-signal-safe. */
static inline void xcn_blame(struct xcontend *cn, uint32_t pg)
{
    if (cn->cn_blamed == 0)
        cn->cn_blamed = pg + 1;
}
/* The running transaction lost a page to transaction id of slot: after
 * its abort, the next attempt waits until that one has ended.
 * Async-signal-safe. */
static inline void xcn_lost_to(struct xcontend *cn, uint32_t slot,
                               uint64_t id)
{
    if (cn->cn_rival_id == 0) {
        cn->cn_rival_slot = slot;
        cn->cn_rival_id = id;
    }
}
/* The outermost transaction id ended: committed, or aborted (conflict:
 * by a conflict).  Counts it, and after a conflict waits for the rival it
 * lost a page to and sleeps the backoff. */
void xcn_end(struct xcontend *cn, struct xctl *cx, uint64_t id,
             int committed, int conflict);

#endif
