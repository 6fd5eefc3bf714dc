/* xac_ctl.h: the shared control file "<xInit path>/xac.ctl".
 *
 * Layout, format 5 (docs/libxac-formats.md has the full description):
 *
 *   offset 0      struct xctl_hdr, starting with magic and format
 *   ch_slotoff    ch_nslots process slots (struct xctl_slot, 64 bytes)
 *
 * The file is mapped MAP_SHARED by every process that xInit()s the same
 * directory.  The header's robust process-shared mutex ch_lock guards the
 * slot table and the shared version state of the segment (xac_seg.h); the
 * file is created and initialized under flock(LOCK_EX) so two processes
 * never both initialize it.  Fields read without the lock are accessed with
 * __atomic builtins.
 */
#ifndef XAC_CTL_H
#define XAC_CTL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#define XCTL_MAGIC 0x4C434158u /* "XACL" in a little-endian dump */
#define XCTL_FORMAT 6u
#define XCTL_NAME "xac.ctl"
#define XCTL_SLOTS 4096u       /* process slots in a new file */
#define XCTL_SLOTS_MIN XCTL_SLOTS
#define XCTL_CPUS 256u         /* CPUs whose log-sync latency is kept */

struct xctl_hdr {
    uint32_t ch_magic;       /* XCTL_MAGIC */
    uint32_t ch_format;      /* XCTL_FORMAT */
    uint32_t ch_psize;       /* page size of the machine that created it */
    uint32_t ch_lock_size;   /* sizeof(pthread_mutex_t), an ABI check */
    uint64_t ch_size;        /* bytes of the file */
    uint64_t ch_next_txn;    /* next global transaction id (thesis 3.1) */
    uint64_t ch_commits;     /* the commit clock: stamp of the newest
                              * committed version */
    uint32_t ch_nslots;      /* process slots */
    uint32_t ch_slotoff;     /* offset of slot 0 */
    uint32_t ch_slot_hwm;    /* slots [0, hwm) may be in use */
    uint32_t ch_direct;      /* a commit is writing into the data file */
    uint64_t ch_inprog;      /* stamp of the commit being published, or 0 */
    uint32_t ch_repair;      /* a lock owner died: repair version state */
    uint32_t ch_log_sync_us; /* how long the newest log sync took (group
                              * commit: how long a waiter spins) */
    pthread_mutex_t ch_lock; /* robust, process-shared */
    /* The durable log (xac_log.h); format 3.  Meaningful while
     * ch_log_ready is 1 (set by recovery, cleared when the last process
     * unmaps).  tail/prev/tail_stamp change under ch_lock; synced and
     * dstamp only grow, by the sync leader. */
    uint32_t ch_log_ready;   /* the fields below describe the log */
    uint32_t ch_log_failed;  /* a log write or sync failed: no more
                              * commits until recovery */
    uint64_t ch_log_tail;    /* LSN of the next record: file << 32 | off */
    uint64_t ch_log_prev;    /* LSN of the newest record */
    uint64_t ch_log_tail_stamp; /* commit stamp of the newest record */
    uint64_t ch_log_synced;  /* records below this LSN are stable */
    uint64_t ch_log_dstamp;  /* commits up to this stamp are stable */
    uint32_t ch_log_leader;  /* pid of the process syncing, 0 none */
    uint32_t ch_log_seq;     /* futex word: bumped after every sync */
    uint64_t ch_log_bytes;   /* statistics since the control file was */
    uint64_t ch_log_records; /* created */
    uint64_t ch_log_syncs;
    uint64_t ch_log_payload; /* bytes of changed data in the records */
    uint64_t ch_log_recovered; /* recoveries run */
    uint64_t ch_ckpt_seq;    /* sequence of the newest checkpoint */
    uint32_t ch_log_mapped_since; /* recovery must run before the next
                                   * first mapper: 0 after recovery */
    uint32_t ch_rival_sleepers; /* processes asleep until a transaction
                                 * they lost a page to ends, each on the
                                 * low half of its slot's cs_txn
                                 * (xctl_txn_word).  Format 3 counted
                                 * log waiters here; formats 4 and 5 left
                                 * it 0 */
    /* Format 4: the group-commit leader's sync time by the CPU it ran on
     * (moving average, us; 0 = never measured).  Where one CPU takes the
     * disk's interrupts, a leader elsewhere is woken by an inter-processor
     * interrupt, twice per sync (xac_group.c, lead_elsewhere). */
    uint32_t ch_cpu_sync_us[XCTL_CPUS];
    /* Format 5: contention management (xac_contend.c), on a cache line
     * of its own.  ch_writers counts the update transactions admitted
     * (XAC_WRITERS); a slot's cs_admitted says it counts in it, so that
     * the reaper can take a dead process out (a hint: it may read low
     * after deaths, never high).  ch_irrev is 1 + the slot of the process
     * running the irrevocable transaction (XAC_ESCALATE), 0 none, and
     * ch_irrev_txn that transaction's id: while it is set, no other
     * commit publishes and no writer wins a page from it. */
    int32_t ch_writers __attribute__((aligned(64)));
    uint32_t ch_admit_seq;   /* futex word: bumped when a writer leaves,
                              * or ends a transaction of its turn */
    uint32_t ch_admit_waiters; /* processes sleeping on ch_admit_seq */
    uint32_t ch_irrev;       /* 1 + slot of the irrevocable transaction */
    uint64_t ch_irrev_txn;   /* its id, 0 none */
    uint32_t ch_irrev_seq;   /* futex word: bumped when ch_irrev is freed */
    uint32_t ch_irrev_waiters; /* processes sleeping on ch_irrev_seq */
    /* Format 6: the LSN up to which the tail's log file holds written
     * zeros or records (xac_logfile.c, xlf_alloc); under ch_lock. */
    uint64_t ch_log_zeroed;
};

enum xctl_slot_state { XS_FREE = 0, XS_LIVE = 1 };

/* A slot's place among the admitted writers (xac_contend.c).  XA_HELD:
 * between two transactions of its turn; another writer may take the
 * place over by compare-and-swap to XA_OUT (the count stays). */
enum xctl_admitted { XA_OUT = 0, XA_IN = 1, XA_HELD = 2 };

struct xctl_slot {
    int32_t cs_pid;          /* owner, 0 if free */
    uint32_t cs_state;       /* enum xctl_slot_state */
    uint64_t cs_start;       /* owner's start time (xos_proc_start) */
    uint64_t cs_txn;         /* global id of its transaction, 0 if none */
    uint64_t cs_snapshot;    /* commit clock its transaction reads at */
    uint64_t cs_doom;        /* id of its transaction another one killed */
    uint32_t cs_mapped;      /* it has the segment mapped */
    uint32_t cs_doom_pg;     /* 1 + the page on which cs_doom was lost
                              * (format 5; statistics only) */
    uint64_t cs_wait_end;    /* LSN its commit waits to be stable, 0 when
                              * it is not waiting (group commit) */
    uint32_t cs_cpu;         /* 1 + the CPU it last began or waited on, 0
                              * unknown (format 4) */
    uint32_t cs_admitted;    /* it counts in ch_writers (format 5):
                              * enum xctl_admitted */
};

/* The 32-bit futex word within s->cs_txn that holds its low half (a
 * transaction's end changes it: ids are below 2^48 and only grow). */
static inline uint32_t *xctl_txn_word(struct xctl_slot *s)
{
    return (uint32_t *)&s->cs_txn +
           (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 1 : 0);
}

/* Can a process spin on a held ch_lock (XAC_LOCK_SPIN_US)?  The spin
 * watches the mutex's word, which only glibc's layout names; elsewhere a
 * process sleeps at once. */
#ifdef __GLIBC__
#define XCTL_CAN_SPIN 1
#else
#define XCTL_CAN_SPIN 0
#endif

struct xctl {
    int cx_fd;
    struct xctl_hdr *cx_hdr; /* mapping of the whole file */
    size_t cx_maplen;
    uint32_t cx_slot;        /* our slot index */
    uint64_t cx_spin_ns;     /* XAC_LOCK_SPIN_US, in ns */
    unsigned long long cx_lock_busy; /* xctl_lock found ch_lock held */
    unsigned long long cx_lock_spun; /* ... and took it within the spin */
    uint32_t cx_look;        /* the slot xctl_any_dead looks at next */
};

/* Open (creating if needed) dir/xac.ctl and take a process slot.
 * Returns 0, XAC_EBADCTL, XAC_EBUSY (no free slot) or an errno value. */
int xctl_open(struct xctl *cx, const char *dir, size_t psize);
/* Free our slot and unmap.  Safe on a struct xctl that failed to open. */
void xctl_close(struct xctl *cx);
struct xctl_slot *xctl_slots(struct xctl *cx);
/* Lock ch_lock.  If its owner died holding it, make it consistent and set
 * ch_repair (the version state may be half-changed).  A process that finds
 * it held spins up to cx_spin_ns before it sleeps in the kernel. */
void xctl_lock(struct xctl *cx);
void xctl_unlock(struct xctl *cx);
/* Is the process that owns slot s alive (pid exists with the same start
 * time)?  Async-signal-safe. */
int xctl_slot_alive(const struct xctl_slot *s);
/* Take slot's process out of the contention state (xac_contend.c): out
 * of the admitted writers, and its irrevocable token freed.  For a
 * process that died; waiters are woken. */
void xctl_forget_contention(struct xctl *cx, uint32_t slot);
/* Slot s's transaction has ended (its cs_txn was just changed): wake the
 * processes asleep until it did, if any process sleeps so. */
void xctl_txn_ended(struct xctl *cx, struct xctl_slot *s);
/* Free the slots of dead processes.  Call with ch_lock held.  Returns how
 * many were freed. */
unsigned xctl_reap(struct xctl *cx);
/* Look at up to n slots other than ours for a dead process, without
 * ch_lock, going round the slots from where the last look stopped: 1 if
 * one looked dead (xctl_reap, under the lock, asks again).  Each look
 * reads /proc, microseconds a slot: under the lock, every writer waited
 * for it (64 slots every 256th commit of each of 64 processes cost 5 to
 * 10 % of the nondurable throughput, docs/benchmarks-scaling.md, "Reaping
 * outside the commit lock"). */
int xctl_any_dead(struct xctl *cx, uint32_t n);
/* Has a live process other than us the segment mapped (cs_mapped)?  Stops
 * at the first one it finds alive, and frees the slots of the dead it
 * meets on the way (a full reap asks /proc about every slot: 63 questions
 * for each of 64 processes that leave).  Call with ch_lock held. */
int xctl_other_mapped(struct xctl *cx);

#endif
