/* xac_group.c: group commit (xac_group.h).  A committer appends its
 * record under ch_lock and releases it; then one process at a time, the
 * leader (ch_log_leader), syncs the log up to the tail it read and
 * publishes ch_log_synced; the others spin briefly, then sleep on the
 * futex word ch_log_seq.  A dead leader is replaced after a timeout.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "xac.h"
#include "xac_atomic.h"
#include "xac_group.h"
#include "xac_log.h"
#include "xac_logfile.h"
#include "xac_os.h"

/* Sync the log file holding LSN t, then publish t as stable and s as the
 * newest stable commit stamp.  0 or XAC_EIO (the log is then failed). */
static int sync_to(struct xlog *lg, uint64_t t, uint64_t s)
{
    struct xctl_hdr *h = xlf_ch(lg);
    int rc;

    if (t <= LD(&h->ch_log_synced))
        return 0;
    rc = xlf_use(lg, (uint32_t)(t >> 32));
    if (rc == 0)
        rc = xlf_sync(lg, lg->lg_fd);
    if (rc != 0) {
        xlog_fail(lg);
        return XAC_EIO;
    }
    if (LD(&h->ch_log_failed))
        return XAC_EIO;
    xlf_mark_stable(h, t, s);
    __atomic_add_fetch(&h->ch_log_syncs, 1, __ATOMIC_SEQ_CST);
    return 0;
}

/* As the leader: sync the log up to the tail. */
static int lead(struct xlog *lg)
{
    struct xctl_hdr *h = xlf_ch(lg);
    uint64_t t, s;

    xctl_lock(lg->lg_ctl);
    t = h->ch_log_tail;
    s = h->ch_log_tail_stamp;
    xctl_unlock(lg->lg_ctl);
    return sync_to(lg, t, s);
}

/* Another process leading at the same time does no harm: each sync
 * covers every write before it, and the stable marks only grow. */
int xgrp_sync_locked(struct xlog *lg)
{
    struct xctl_hdr *h = xlf_ch(lg);

    return sync_to(lg, h->ch_log_tail, h->ch_log_tail_stamp);
}

/* Has process pid died (gone, or a zombie its parent has not reaped)? */
static int proc_dead(pid_t pid)
{
    char buf[512];
    const char *p;

    if (xos.kill(pid, 0) != 0 && errno == ESRCH)
        return 1;
    p = xos_proc_stat(pid, buf, sizeof buf);
    return p != NULL && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

static int wait_stable(struct xlog *lg, uint64_t end);

/* More than twice as many processes use the control file as there are
 * CPUs: a waiter that spins or yields in a loop takes the CPU from one
 * that has work (with 64 processes on 2 CPUs, sched_yield was 40 % of all
 * CPU time), and while the leader syncs the others append anyway.  So no
 * one spins, the leader gathers no one, and no one waits for a leader
 * elsewhere.  (At twice the CPUs the spinning still pays: test A, 4
 * processes on 2 CPUs, 0.27 syncs a commit with it, 0.43 without.) */
static int crowded(const struct xlog *lg)
{
    return LD(&xlf_ch(lg)->ch_slot_hwm) > 2 * lg->lg_cpus;
}

static uint64_t now_us(void)
{
    return xos_now_ns() / 1000u;
}

/* As the new leader: if other processes are inside transactions whose
 * commits the log does not hold yet, give them up to lg_delay_us to
 * append, so that one sync covers them too (PostgreSQL's commit_delay with
 * commit_siblings).  A sibling waiting for a record the next sync covers
 * is ready; one still running, or one the last sync already covered and
 * that is about to start its next transaction, is not.  Alone: no delay. */
static void gather(struct xlog *lg)
{
    struct xctl_hdr *h = xlf_ch(lg);
    struct xctl_slot *s = xctl_slots(lg->lg_ctl);
    uint32_t i, hwm, pending;
    uint64_t t0 = 0, synced;

    if (lg->lg_delay_us == 0 || crowded(lg))
        return;
    for (;;) {
        hwm = LD(&h->ch_slot_hwm);
        synced = LD(&h->ch_log_synced);
        pending = 0;
        for (i = 0; i < hwm; i++)
            if (i != lg->lg_ctl->cx_slot && LD(&s[i].cs_txn) != 0 &&
                LD(&s[i].cs_wait_end) <= synced)
                pending++;
        if (pending == 0)
            return;
        if (t0 == 0)
            t0 = now_us();
        else if (now_us() - t0 >= lg->lg_delay_us)
            return;
        xos.sched_yield();
    }
}

/* ---- where the leader runs ------------------------------------------ */

/* 1 + the CPU we run on; 0 if unknown or past the table. */
static uint32_t cpu_now(void)
{
    int c = xos.getcpu();

    return c >= 0 && (unsigned)c < XCTL_CPUS ? (uint32_t)c + 1 : 0;
}

/* A leader that ran on cpu (1-based) synced in us microseconds: fold it
 * into that CPU's moving average (weight 1/8).  Two leaders racing here
 * lose a sample, no more. */
static void note_sync_us(struct xlog *lg, uint32_t cpu, uint64_t us)
{
    uint32_t *a = &xlf_ch(lg)->ch_cpu_sync_us[cpu - 1], old = LD(a);

    if (us == 0)
        us = 1;
    if (us > 1000000)
        us = 1000000;
    ST(a, old == 0 ? (uint32_t)us : (uint32_t)((7 * (uint64_t)old + us) / 8));
}

/* Should this waiter leave the lead to a sibling whose CPU's syncs
 * complete sooner?  The sync's latency includes waking the leader when the
 * disk's interrupts arrive: on a machine where one CPU takes them all (a
 * VM's single-queue virtio disk), a leader on another CPU is woken by an
 * inter-processor interrupt, twice per sync (the write, then the cache
 * flush), and its syncs take 40 % longer (docs/libxac-durability.md).  A
 * sibling counts if it runs a transaction or waits for a record the last
 * sync did not cover: either is about to wait and will take the lead.
 * As leader we would wait up to the commit delay for a running sibling
 * anyway (gather), and waiting longer than that plus the difference in
 * latency cannot pay: *since (when we began to wait so; 0 before) bounds
 * it.  Averages come from the CPUs leaders actually use; a CPU avoided
 * is measured again once its average undercuts the others'. */
static int lead_elsewhere(struct xlog *lg, uint64_t *since)
{
    struct xctl_hdr *h = xlf_ch(lg);
    struct xctl_slot *s = xctl_slots(lg->lg_ctl);
    uint32_t i, hwm, c, mine, lat, best, cpu;
    uint64_t synced, now;

    if (!lg->lg_by_cpu || crowded(lg) || (cpu = cpu_now()) == 0)
        return 0;
    mine = LD(&h->ch_cpu_sync_us[cpu - 1]);
    if (mine == 0)
        return 0; /* not measured: leading measures it */
    best = mine;
    hwm = LD(&h->ch_slot_hwm);
    synced = LD(&h->ch_log_synced);
    for (i = 0; i < hwm; i++) {
        if (i == lg->lg_ctl->cx_slot ||
            (LD(&s[i].cs_txn) == 0 && LD(&s[i].cs_wait_end) <= synced))
            continue;
        c = LD(&s[i].cs_cpu);
        if (c == 0 || c == cpu || c > XCTL_CPUS)
            continue;
        lat = LD(&h->ch_cpu_sync_us[c - 1]);
        if (lat != 0 && lat < best)
            best = lat;
    }
    if ((uint64_t)best * 10 > (uint64_t)mine * 9)
        return 0; /* under 10 % faster: within the averages' noise */
    now = now_us();
    if (*since == 0) {
        *since = now;
        lg->lg_deferred++;
    }
    return now - *since < (uint64_t)lg->lg_delay_us + (mine - best);
}

void xgrp_note_cpu(struct xlog *lg)
{
    if (lg->lg_by_cpu)
        ST(&xctl_slots(lg->lg_ctl)[lg->lg_ctl->cx_slot].cs_cpu, cpu_now());
}

int xgrp_wait(struct xlog *lg, uint64_t end)
{
    struct xctl_slot *me = &xctl_slots(lg->lg_ctl)[lg->lg_ctl->cx_slot];
    int rc;

    xgrp_note_cpu(lg);
    ST(&me->cs_wait_end, end);
    rc = wait_stable(lg, end);
    ST(&me->cs_wait_end, 0);
    return rc;
}

/* While another process syncs for us, yield the CPU in a loop for about
 * as long as the last sync took before sleeping on the futex: waking from
 * the futex costs tens of microseconds on a VM, and a waiter that sees its
 * record stable at once starts its next transaction in time to share the
 * next sync.  Returns 1 once the record is stable. */
static int spin_stable(struct xlog *lg, uint64_t end)
{
    struct xctl_hdr *h = xlf_ch(lg);
    uint64_t t0 = now_us(), lim = 2u * (uint64_t)LD(&h->ch_log_sync_us);

    if (lim > 2000)
        lim = 2000;
    if (crowded(lg))
        lim = 0;
    while (now_us() - t0 < lim) {
        if (LD(&h->ch_log_synced) >= end)
            return 1;
        if (LD(&h->ch_log_failed) || LD(&h->ch_log_leader) == 0)
            return 0;
        xos.sched_yield();
    }
    return 0;
}

/* Naps of a waiter without a sync before it asks whether the leader
 * died: the question reads /proc, and with many waiters and a slow disk
 * asking at every nap was a third of all CPU time. */
#define XGRP_DEAD_NAPS 5

static int wait_stable(struct xlog *lg, uint64_t end)
{
    struct xctl_hdr *h = xlf_ch(lg);
    uint32_t me = (uint32_t)xos.getpid(), seq, l;
    struct timespec ts = {0, 2000000};
    uint64_t t0, syncs, since = 0;
    uint32_t cpu;
    int naps = 0;

    for (;;) {
        if (LD(&h->ch_log_synced) >= end)
            return 0;
        if (LD(&h->ch_log_failed))
            return XAC_EIO;
        seq = LD(&h->ch_log_seq);
        if (LD(&h->ch_log_leader) == 0 && lead_elsewhere(lg, &since)) {
            xos.sched_yield();
            continue;
        }
        l = 0;
        if (__atomic_compare_exchange_n(&h->ch_log_leader, &l, me, 0,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
            gather(lg);
            cpu = cpu_now();
            syncs = LD(&h->ch_log_syncs);
            t0 = now_us();
            lead(lg);
            t0 = now_us() - t0;
            if (LD(&h->ch_log_syncs) != syncs) {
                /* It synced (sync_to skips a log already stable). */
                ST(&h->ch_log_sync_us, (uint32_t)t0);
                lg->lg_leads++;
                if (cpu != 0 && cpu_now() == cpu)
                    note_sync_us(lg, cpu, t0);
            }
            ST(&h->ch_log_leader, 0);
            __atomic_add_fetch(&h->ch_log_seq, 1, __ATOMIC_SEQ_CST);
            xos.futex(&h->ch_log_seq, FUTEX_WAKE, INT_MAX, NULL);
            continue;
        }
        if (spin_stable(lg, end))
            return 0;
        if (LD(&h->ch_log_synced) >= end)
            return 0;
        if (xos.futex(&h->ch_log_seq, FUTEX_WAIT, seq, &ts) != 0 &&
            errno == ETIMEDOUT && LD(&h->ch_log_seq) == seq &&
            ++naps >= XGRP_DEAD_NAPS) {
            /* Is the leader still alive? */
            naps = 0;
            l = LD(&h->ch_log_leader);
            if (l != 0 && l != me && proc_dead((pid_t)l))
                __atomic_compare_exchange_n(&h->ch_log_leader, &l, 0, 0,
                                            __ATOMIC_SEQ_CST,
                                            __ATOMIC_SEQ_CST);
        }
    }
}

int xgrp_sync_all(struct xlog *lg)
{
    if (!lg->lg_durable || !LD(&xlf_ch(lg)->ch_log_ready))
        return 0;
    return xgrp_wait(lg, LD(&xlf_ch(lg)->ch_log_tail));
}
