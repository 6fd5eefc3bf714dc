/* xac_commit.c: the commit protocol, multiversion concurrency control
 * across processes (xac_commit.h).  docs/libxac.md describes the design
 * and docs/libxac-serializability.md argues that it is serializable.  In
 * short:
 *
 * - Every transaction takes a snapshot (the commit clock ch_commits) at
 *   xbegin and reads, for each page, the newest version whose commit stamp
 *   is <= its snapshot (the version store, xac_seg.h, keeps them).
 * - xend validates under ch_lock that no touched page got a version newer
 *   than the snapshot (backward validation), then publishes the writeset
 *   with stamp clock+1: the serialization order is the commit order.
 *   Read-only transactions serialize at their snapshot and never validate.
 *   When no other transaction runs, the writeset goes straight into the
 *   data file; otherwise it becomes new versions in the pool.
 * - DURABLE: the writeset's redo record is built before ch_lock and
 *   appended under it, in commit order; the commit then waits for group
 *   commit to make it stable, outside the lock.  Alone, the record is
 *   made stable under the lock and the writeset goes into the data file.
 * - Writers take a per-page writer word (pe_owner) at their first write;
 *   a conflict there is settled by the conflict policy (self-abort,
 *   oldest-wins, requester-wins, polite).  That is only the policy: the
 *   validation alone guarantees serializability.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "xac.h"
#include "xac_assert.h"
#include "xac_atomic.h"
#include "xac_commit.h"
#include "xac_contend.h"
#include "xac_gc.h"
#include "xac_group.h"
#include "xac_int.h"
#include "xac_log.h"
#include "xac_os.h"
#include "xac_seg.h"

/* A writer word: the transaction id above the 16 bits of its slot. */
#define OWNER(id, slot) (((id) << 16) | (uint64_t)(slot))
#define OWNER_SLOT(w) ((uint32_t)((w)&0xffff))
#define OWNER_ID(w) ((w) >> 16)

_Static_assert(XCTL_SLOTS <= 0x10000, "a slot fits a writer word");

static struct xctl_hdr *ch(struct xac_env *e)
{
    return e->xe_ctl.cx_hdr;
}

static struct xctl_slot *myslot(struct xac_env *e)
{
    return &xctl_slots(&e->xe_ctl)[e->xe_ctl.cx_slot];
}

/* ---- snapshots ------------------------------------------------------- */

void xcm_begin(struct xac_env *e)
{
    struct xctl_hdr *h = ch(e);
    struct xctl_slot *s = myslot(e);
    uint64_t id = __atomic_fetch_add(&h->ch_next_txn, 1, __ATOMIC_SEQ_CST);
    uint64_t snap;

    /* Our slot is ours, and its id fits a writer word. */
    XASSERT(s->cs_pid == e->xe_pid && id > 0 && id < ((uint64_t)1 << 48));
    if (LD(&h->ch_repair) && e->xe_seg.sg_hdr != NULL) {
        xseg_lock(&e->xe_seg);
        xseg_unlock(&e->xe_seg);
    }
    for (;;) {
        snap = LD(&h->ch_commits);
        ST(&s->cs_snapshot, snap);
        ST(&s->cs_txn, id);
        if (LD(&h->ch_direct)) {
            /* A commit is writing into the data file because no other
             * transaction runs: wait for it (it holds ch_lock). */
            ST(&s->cs_txn, 0);
            xctl_lock(&e->xe_ctl);
            xctl_unlock(&e->xe_ctl);
            continue;
        }
        if (LD(&h->ch_commits) == snap)
            break;
    }
    e->xe_tx.tx_id = id;
    e->xe_tx.tx_snap = snap;
}

uint32_t xcm_stale(struct xac_env *e)
{
    struct xtxn *tx = &e->xe_tx;
    size_t i;

    /* Page stamps never pass the commit clock. */
    if (LD(&ch(e)->ch_commits) == tx->tx_snap)
        return 0;
    for (i = 0; i < tx->tx_ntouched; i++)
        if (xseg_newest(&e->xe_seg, tx->tx_touched[i]) > tx->tx_snap)
            return tx->tx_touched[i] + 1;
    /* Kept pages are read without a fault, so any of them may be in the
     * readset: an update transaction validates them all (at most
     * XTX_KEEP_SHARED while others are attached, xac_txn.c). */
    for (i = 0; i < tx->tx_nkept; i++)
        if ((tx->tx_pstate[tx->tx_kept[i]] & XP_KEPT) &&
            xseg_newest(&e->xe_seg, tx->tx_kept[i]) > tx->tx_snap)
            return tx->tx_kept[i] + 1;
    return 0;
}

int xcm_extend(struct xac_env *e)
{
    uint64_t now = LD(&ch(e)->ch_commits);
    uint32_t stale;

    /* The clock only grows. */
    XASSERT(now >= e->xe_tx.tx_snap);
    /* Every page read so far must still be current: then the reads are
     * those of the newer snapshot too (the timestamp extension of LSA and
     * TL2).  xcm_stale checks exactly that against the old snapshot. */
    if (now == e->xe_tx.tx_snap)
        return 0;
    if ((stale = xcm_stale(e)) != 0) {
        xcn_blame(&e->xe_cn, stale - 1); /* the page that changed first */
        return 0;
    }
    e->xe_tx.tx_snap = now;
    ST(&myslot(e)->cs_snapshot, now);
    e->xe_tx.tx_extensions++;
    return 1;
}

/* Has another slot a process (running: a running transaction)? */
static int others(struct xac_env *e, int running)
{
    struct xctl_slot *s = xctl_slots(&e->xe_ctl);
    uint32_t i, hwm = LD(&ch(e)->ch_slot_hwm);

    for (i = 0; i < hwm; i++)
        if (i != e->xe_ctl.cx_slot &&
            (running ? LD(&s[i].cs_txn) != 0 : LD(&s[i].cs_pid) != 0))
            return 1;
    return 0;
}

int xcm_alone(struct xac_env *e)
{
    return !others(e, 0);
}

/* Is any other transaction running?  Called with ch_direct set. */
static int others_running(struct xac_env *e)
{
    return others(e, 1);
}

/* ---- writer words and conflict policies ------------------------------ */

int xcm_doomed(struct xac_env *e)
{
    return LD(&myslot(e)->cs_doom) == e->xe_tx.tx_id;
}

/* Is the transaction named by writer word w still running? */
static int owner_running(struct xac_env *e, uint64_t w, int check_alive)
{
    struct xctl_slot *s = &xctl_slots(&e->xe_ctl)[OWNER_SLOT(w)];

    if (OWNER_SLOT(w) >= ch(e)->ch_nslots || LD(&s->cs_txn) != OWNER_ID(w))
        return 0;
    if (check_alive && !xctl_slot_alive(s)) {
        e->xe_seg.sg_reap = 1;
        return 0;
    }
    return 1;
}

static void doom(struct xac_env *e, uint64_t w, uint32_t pg)
{
    struct xctl_slot *s = &xctl_slots(&e->xe_ctl)[OWNER_SLOT(w)];

    ST(&s->cs_doom_pg, pg + 1);
    ST(&s->cs_doom, OWNER_ID(w));
}

static void nap(unsigned us)
{
    struct timespec ts = {0, (long)us * 1000L};
    xos.nanosleep(&ts, NULL);
}

int xcm_acquire(struct xac_env *e, uint32_t pg)
{
    struct xtxn *tx = &e->xe_tx;
    uint64_t *wp = &e->xe_seg.sg_pt[pg].pe_owner;
    uint64_t mine = OWNER(tx->tx_id, e->xe_ctl.cx_slot), cur;
    unsigned tries = 0;

    for (;;) {
        cur = LD(wp);
        if (cur == mine)
            return 1;
        if (cur != 0 && owner_running(e, cur, 0)) {
            int win;
            /* An irrevocable transaction wins every page, and nobody
             * wins one from it (xac_contend.h), whatever the policies. */
            int policy = e->xe_cn.cn_irrevocable ? XAC_POLICY_REQUESTER_WINS
                         : xcn_is_irrevocable(&e->xe_ctl, OWNER_ID(cur))
                             ? XAC_POLICY_SELF_ABORT
                             : tx->tx_policy;
            switch (policy) {
            case XAC_POLICY_OLDEST_WINS:
                win = tx->tx_id < OWNER_ID(cur);
                break;
            case XAC_POLICY_REQUESTER_WINS:
                win = 1;
                break;
            case XAC_POLICY_POLITE:
                if (tries < 10) {
                    nap(1u << tries);
                    tries++;
                    continue;
                }
                win = 1;
                break;
            default: /* XAC_POLICY_SELF_ABORT */
                win = 0;
                break;
            }
            if (!win && owner_running(e, cur, 1)) {
                tx->tx_failed = 1;
                tx->tx_conflict = 1;
                xcn_blame(&e->xe_cn, pg);
                xcn_lost_to(&e->xe_cn, OWNER_SLOT(cur), OWNER_ID(cur));
                return 0;
            }
            if (win)
                doom(e, cur, pg);
        }
        if (__atomic_compare_exchange_n(wp, &cur, mine, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST))
            return 1;
    }
}

/* Give up the writer words we hold (a word another transaction took
 * meanwhile stays its). */
static void release_owned(struct xac_env *e)
{
    struct xtxn *tx = &e->xe_tx;
    uint64_t mine = OWNER(tx->tx_id, e->xe_ctl.cx_slot), w;
    size_t i;
    uint32_t pg;

    for (i = 0; i < tx->tx_ntouched; i++) {
        pg = tx->tx_touched[i];
        if (tx->tx_pstate[pg] & XP_OWN) {
            w = mine;
            __atomic_compare_exchange_n(&e->xe_seg.sg_pt[pg].pe_owner, &w, 0,
                                        0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST);
        }
    }
}

void xcm_end(struct xac_env *e)
{
    struct xctl_slot *s = myslot(e);

    release_owned(e);
    /* Only we clear our slot's transaction (a reaper frees dead ones). */
    XASSERT(LD(&s->cs_txn) == e->xe_tx.tx_id);
    ST(&s->cs_txn, 0);
    xctl_txn_ended(&e->xe_ctl, s); /* wakes those that lost a page to us */
}

/* ---- publishing the writeset ----------------------------------------- */

static int written(struct xac_env *e, uint32_t pg)
{
    return (e->xe_tx.tx_pstate[pg] & XP_LEVEL) == XP_WRITE;
}

/* Take ch_lock and validate the transaction: 0 with the lock held, or
 * ABORTED (a conflict) or XAC_EIO (DURABLE: the log failed) without it.
 * While another process's transaction is irrevocable, nothing commits:
 * wait for it first. */
static int lock_valid(struct xac_env *e)
{
    uint32_t stale;

    for (;;) {
        xseg_lock(&e->xe_seg);
        if (!xcn_blocked(&e->xe_cn, &e->xe_ctl))
            break;
        xseg_unlock(&e->xe_seg);
        xcn_wait_irrevocable(&e->xe_cn, &e->xe_ctl);
    }
    if (e->xe_log.lg_durable && LD(&ch(e)->ch_log_failed)) {
        xseg_unlock(&e->xe_seg);
        return XAC_EIO;
    }
    stale = xcm_doomed(e) ? 0 : xcm_stale(e);
    if (xcm_doomed(e) || stale != 0) {
        xseg_unlock(&e->xe_seg);
        if (stale != 0)
            xcn_blame(&e->xe_cn, stale - 1);
        e->xe_tx.tx_conflict = 1;
        return ABORTED;
    }
    return 0;
}

/* Under ch_lock, validated: commit stamp c is the clock's next tick. */
static void publish_clock(struct xctl_hdr *h, uint64_t c)
{
    XASSERT(h->ch_commits + 1 == c);
    ST(&h->ch_commits, c);
}

/* No other transaction runs: write the writeset into the data file. */
static int commit_direct(struct xac_env *e, uint64_t c)
{
    struct xseg *sg = &e->xe_seg;
    uint32_t *t = e->xe_tx.tx_touched;
    size_t n = e->xe_tx.tx_ntouched, i, j;
    unsigned sh = e->xe_pshift;
    uint64_t stamp = LD(&ch(e)->ch_next_txn);
    struct xpe *pe;
    uint32_t g, next;
    int rc = 0, r;

    xseg_drop_cache(sg);
    for (i = 0; i < n; i = j) {
        if (!written(e, t[i])) {
            j = i + 1;
            continue;
        }
        for (j = i + 1; j < n && t[j] == t[j - 1] + 1 && written(e, t[j]);
             j++)
            ;
        r = xos_write_all(e->xe_map.mp_fd,
                          e->xe_map.mp_back + ((size_t)t[i] << sh),
                          (size_t)(j - i) << sh, (off_t)t[i] << sh);
        if (rc == 0)
            rc = r;
    }
    for (i = 0; i < n; i++) {
        if (!written(e, t[i]))
            continue;
        pe = &sg->sg_pt[t[i]];
        for (g = pe->pe_head; g != 0; g = next) {
            next = sg->sg_fr[g].fr_next;
            xseg_limbo_put(sg, g, stamp);
        }
        ST(&pe->pe_head, 0);
        ST(&pe->pe_ts, c);
        ST(&pe->pe_newest, c);
        xseg_note_change(sg, t[i], c);
    }
    return rc;
}

/* Other transactions run: the writeset becomes new versions in the pool
 * (DURABLE: once its record is in the log). */
static int commit_pool(struct xac_env *e, uint64_t c, size_t nw)
{
    struct xseg *sg = &e->xe_seg;
    uint32_t *t = e->xe_tx.tx_touched, *fl, f;
    size_t n = e->xe_tx.tx_ntouched, i, k = 0;
    int durable = e->xe_log.lg_durable;
    struct xpe *pe;
    int rc = 0, tried = 0;

    fl = malloc((nw ? nw : 1) * sizeof *fl);
    if (fl == NULL)
        return ENOMEM;
    while (k < nw) {
        f = xseg_frame_alloc(sg);
        if (f == 0) {
            if (tried++ > 1)
                break;
            xctl_reap(&e->xe_ctl);
            xgc_collect(sg, 0);
            continue;
        }
        fl[k++] = f;
    }
    if (k < nw) {
        rc = XAC_EFULL;
        goto undo;
    }
    if (durable && xlog_append(&e->xe_log, c, e->xe_tx.tx_id) != 0) {
        rc = XAC_EIO;
        goto undo;
    }
    ST(&ch(e)->ch_inprog, c);
    for (i = 0, k = 0; i < n && rc == 0; i++) {
        if (!written(e, t[i]))
            continue;
        f = fl[k++];
        sg->sg_fr[f].fr_ts = c;
        sg->sg_fr[f].fr_page = t[i];
        rc = xos_write_all(sg->sg_poolfd,
                           e->xe_map.mp_back + ((size_t)t[i] << e->xe_pshift),
                           e->xe_psize, (off_t)f << e->xe_pshift);
    }
    if (rc != 0) {
        if (durable) {
            xlog_fail(&e->xe_log); /* logged but never published */
            rc = XAC_EIO;
        }
        k = nw;
        goto undo;
    }
    for (i = 0, k = 0; i < n; i++) {
        if (!written(e, t[i]))
            continue;
        f = fl[k++];
        pe = &sg->sg_pt[t[i]];
        /* Chains are newest first. */
        XASSERT(pe->pe_head == 0 || sg->sg_fr[pe->pe_head].fr_ts < c);
        sg->sg_fr[f].fr_next = pe->pe_head;
        sg->sg_fr[f].fr_state = FR_CHAIN;
        ST(&pe->pe_head, f);
        ST(&pe->pe_newest, c);
        xseg_ring_push(sg, t[i]);
        xseg_note_change(sg, t[i], c);
    }
    free(fl);
    return 0;

undo:
    while (k > 0)
        xseg_free_put(sg, fl[--k]);
    free(fl);
    ST(&ch(e)->ch_inprog, 0);
    return rc;
}

/* ---- the DURABLE commit ---------------------------------------------- */

/* Build the redo record of the nw written pages, before ch_lock.  A
 * before-image not kept at its write grant is the version our snapshot
 * read; if another commit replaced it meanwhile, validation fails
 * anyway.  0 or an errno value. */
static int log_prepare(struct xac_env *e, size_t nw)
{
    struct xtxn *tx = &e->xe_tx;
    struct xseg *sg = &e->xe_seg;
    struct xlog *lg = &e->xe_log;
    unsigned sh = e->xe_pshift;
    const char *a;
    uint32_t pg, f;
    size_t i;
    int rc;

    rc = xlog_record_start(lg, nw);
    if (rc != 0)
        return rc;
    for (i = 0; i < tx->tx_ntouched; i++) {
        pg = tx->tx_touched[i];
        if (!written(e, pg))
            continue;
        a = xlog_before(lg, pg);
        if (a == NULL) {
            f = xseg_find(sg, pg, tx->tx_snap);
            rc = f != 0 ? xos_read_all(sg->sg_poolfd, sg->sg_buf,
                                       e->xe_psize, (off_t)f << sh, 1)
                        : xos_read_all(e->xe_map.mp_fd, sg->sg_buf,
                                       e->xe_psize, (off_t)pg << sh, 1);
            if (rc != 0)
                return rc;
            a = sg->sg_buf;
        }
        xlog_record_page(lg, pg, a, e->xe_map.mp_back + ((size_t)pg << sh));
    }
    xlog_record_end(lg);
    return 0;
}

/* Should a nondurable pool commit collect versions under the lock?  Only
 * once more than XCM_LAZY_FRAMES frames (at most a quarter of the pool)
 * are in use.  A collection copies a page into the data file while every
 * other committer waits for ch_lock, and a page that commits keep
 * rewriting (a counter, a tree's inner node) would be copied once a
 * commit; left in the pool a while, its versions are copied once for
 * many.  Test A of concurrency_test (each process rewriting a page of its
 * own) ran 1.4 to 1.6 times as fast on 2 processes, and queries beside
 * a writer no longer map and unmap windows of the file at every commit;
 * random tree inserts, which seldom write a leaf twice meanwhile, ran as
 * fast as before, and single writes to cold random pages, read back
 * cold, lose about a tenth (docs/benchmarks-scaling.md, "Collecting when
 * the pool fills").  The bound keeps the versions waiting in the pool,
 * and so in the page cache, to 16 MiB at 4 KiB pages. */
#define XCM_LAZY_FRAMES 4096u
uint64_t xcm_lazy_bound(const struct xseg *sg)
{
    uint64_t bound = sg->sg_hdr->sh_maxframes / 4;

    return bound > XCM_LAZY_FRAMES ? XCM_LAZY_FRAMES : bound;
}

static int pool_collect_due(const struct xseg *sg)
{
    return sg->sg_hdr->sh_used > xcm_lazy_bound(sg);
}

/* Should a durable commit collect versions under the lock?  Every
 * collection copies pages into the data file while every other committer
 * waits for ch_lock, and most versions it copies are overwritten by the
 * next commits anyway; so collect every XAC_GC_EVERY-th commit, or when
 * the ring of pages with versions grows long.  A full pool collects
 * regardless (commit_pool). */
#define XAC_GC_EVERY 16
#define XAC_GC_RING 64
static int gc_due(struct xac_env *e, size_t nw)
{
    struct xseg_hdr *h = e->xe_seg.sg_hdr;

    return (e->xe_tx.tx_commits % XAC_GC_EVERY) == 0 ||
           h->sh_ring_tail - h->sh_ring_head > XAC_GC_RING + 2 * nw;
}

/* DURABLE, the only process attached, ch_lock held and ch_direct set:
 * append the record, sync the log here, then write the writeset straight
 * into the data file (its record is stable, so the WAL rule holds).  No
 * pool frame is written and read back by GC, and holding ch_lock through
 * the sync delays nobody: a process that attaches meanwhile waits for it.
 * A failed data-file write leaves the file behind a stable record, so the
 * log is failed and recovery replays it. */
static int commit_durable_alone(struct xac_env *e, uint64_t c)
{
    if (xlog_append_stable(&e->xe_log, c, e->xe_tx.tx_id) != 0)
        return XAC_EIO;
    if (commit_direct(e, c) != 0) {
        xlog_fail(&e->xe_log);
        return XAC_EIO;
    }
    return 0;
}

/* DURABLE: alone, commit_durable_alone; else through the pool (the data
 * file only gets versions whose records are stable), the record appended
 * under ch_lock, then the group-commit wait outside it. */
static int commit_durable(struct xac_env *e, size_t nw)
{
    struct xctl_hdr *h = ch(e);
    struct xtxn *tx = &e->xe_tx;
    struct xseg *sg = &e->xe_seg;
    uint64_t c;
    int rc;

    rc = log_prepare(e, nw);
    if (rc == 0)
        rc = lock_valid(e);
    if (rc != 0)
        return rc;
    c = h->ch_commits + 1;
    ST(&h->ch_direct, 1);
    if (xcm_alone(e) && !others_running(e)) {
        rc = commit_durable_alone(e, c);
        if (rc == 0) {
            publish_clock(h, c);
            tx->tx_direct++;
            xgc_reclaim(sg, UINT64_MAX); /* nobody runs */
        }
        ST(&h->ch_direct, 0);
        tx->tx_commits++;
        xseg_unlock(sg);
        if (rc == 0)
            tx->tx_committed_at = c;
        xcn_leave(&e->xe_cn, &e->xe_ctl, 1); /* stable already */
        return rc;
    }
    ST(&h->ch_direct, 0);
    rc = commit_pool(e, c, nw);
    if (rc == 0) {
        publish_clock(h, c);
        ST(&h->ch_inprog, 0);
        if (gc_due(e, nw))
            xgc_collect(sg, 0);
    }
    tx->tx_commits++;
    xseg_unlock(sg);
    if (rc != 0)
        return rc;
    tx->tx_committed_at = c;
    /* Published: others may be admitted while we wait for the log (a
     * place held through the sync would keep a CPU idle). */
    xcn_leave(&e->xe_cn, &e->xe_ctl, 0);
    /* Published: a transaction that writes these pages now reads our
     * versions, and its record follows ours in the log, so it cannot be
     * stable before ours.  Holding the words through the sync would only
     * make writers of the same pages abort and retry until it ends. */
    release_owned(e);
    rc = xgrp_wait(&e->xe_log, e->xe_log.lg_end);
    if (rc == 0 && sg->sg_hdr->sh_ring_tail != sg->sg_hdr->sh_ring_head &&
        !others_running(e)) {
        /* Our versions are stable now: copy them into the data file so
         * that later transactions read the file, not pool frames (when
         * others run, their commits collect them anyway). */
        xseg_lock(sg);
        xgc_collect(sg, 2 * nw + 8);
        xseg_unlock(sg);
    }
    return rc;
}

/* ---- the commit ------------------------------------------------------ */

static int commit(struct xac_env *e)
{
    struct xctl_hdr *h = ch(e);
    struct xtxn *tx = &e->xe_tx;
    struct xseg *sg = &e->xe_seg;
    size_t i, nw = 0;
    uint64_t c;
    int rc;

    tx->tx_committed_at = 0;
    for (i = 0; i < tx->tx_ntouched; i++)
        if (written(e, tx->tx_touched[i]))
            nw++;
    if (nw == 0) /* serializes at its snapshot, like a query */
        return 0;
    if (e->xe_log.lg_durable)
        return commit_durable(e, nw);
    rc = lock_valid(e);
    if (rc != 0)
        return rc;
    c = h->ch_commits + 1;
    ST(&h->ch_direct, 1);
    if (!others_running(e)) {
        rc = commit_direct(e, c);
        publish_clock(h, c);
        ST(&h->ch_direct, 0);
        tx->tx_direct++;
        /* Nobody runs: every limbo frame is free. */
        xgc_reclaim(sg, UINT64_MAX);
    } else {
        ST(&h->ch_direct, 0);
        rc = commit_pool(e, c, nw);
        if (rc == 0) {
            publish_clock(h, c);
            ST(&h->ch_inprog, 0);
            if (pool_collect_due(sg))
                xgc_collect(sg, 2 * nw + 8);
        }
    }
    if (rc == 0)
        tx->tx_committed_at = c;
    tx->tx_commits++;
    xseg_unlock(sg);
    xcn_leave(&e->xe_cn, &e->xe_ctl, rc == 0);
    return rc;
}

/* Every XCM_LOOK_EVERY-th commit of a process looks at XCM_LOOK_SLOTS
 * slots for a dead process, after the commit, without the lock; the reap
 * takes the lock only if one looked dead.  The looks cost the same per
 * commit at any number of processes, and every slot is looked at within
 * XCM_LOOK_EVERY * slots / XCM_LOOK_SLOTS commits of any one process.
 * Other paths reap at once where a dead process is in the way: a
 * conflict with its page, a short pool, an admission or irrevocable
 * token it holds (xac_contend.c), xInit. */
#define XCM_LOOK_EVERY 256u
#define XCM_LOOK_SLOTS 8u
static void look_for_dead(struct xac_env *e)
{
    if (!xctl_any_dead(&e->xe_ctl, XCM_LOOK_SLOTS))
        return;
    e->xe_seg.sg_reap = 1; /* xseg_lock reaps */
    xseg_lock(&e->xe_seg);
    xseg_unlock(&e->xe_seg);
}

int xcm_commit(struct xac_env *e)
{
    unsigned long before = e->xe_tx.tx_commits;
    int rc = commit(e);

    if (e->xe_tx.tx_commits != before &&
        e->xe_tx.tx_commits % XCM_LOOK_EVERY == 0)
        look_for_dead(e);
    return rc;
}
