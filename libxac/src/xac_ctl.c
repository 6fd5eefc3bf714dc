/* xac_ctl.c: the shared control file (see xac_ctl.h, docs/libxac.md). */
#include "xac_ctl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>

#include "xac.h"
#include "xac_assert.h"
#include "xac_os.h"

static size_t ctl_size(uint32_t nslots, size_t psize)
{
    size_t n = sizeof(struct xctl_hdr);
    n = (n + 63) & ~(size_t)63;
    n += (size_t)nslots * sizeof(struct xctl_slot);
    return (n + psize - 1) & ~(psize - 1);
}

_Static_assert(sizeof(struct xctl_slot) == 64, "process slot");

static uint32_t ctl_slotoff(void)
{
    return (uint32_t)((sizeof(struct xctl_hdr) + 63) & ~(size_t)63);
}

struct xctl_slot *xctl_slots(struct xctl *cx)
{
    return (struct xctl_slot *)((char *)cx->cx_hdr + cx->cx_hdr->ch_slotoff);
}

#define ctl_slots xctl_slots

#if XCTL_CAN_SPIN
static void cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Wait for ch_lock to look free, at most cx_spin_ns; 1 if it does.  A
 * nondurable commit holds the lock for a few microseconds: sleeping in
 * the kernel (futex) instead costs the sleeper a wake-up and two context
 * switches, the holder a futex wake at its unlock, and may leave a CPU
 * idle meanwhile.  It reads glibc's lock word (the owner's thread id, 0
 * when free; FUTEX_OWNER_DIED once its owner died, which no spin waits
 * out): reading it does not take the cache line from the holder as a
 * trylock in the loop would.  (glibc only: XCTL_CAN_SPIN.) */
static int spin_while_held(struct xctl *cx)
{
    const int *word = &cx->cx_hdr->ch_lock.__data.__lock;
    uint64_t t0 = xos_now_ns(), t;
    int i, w;

    for (;;) {
        for (i = 0; i < 32; i++) {
            w = __atomic_load_n(word, __ATOMIC_RELAXED);
            if (w == 0)
                return 1;
            if (w & FUTEX_OWNER_DIED)
                return 0;
            cpu_pause();
        }
        t = xos_now_ns();
        if (t == 0 || t - t0 >= cx->cx_spin_ns)
            return 0; /* a clock that fails ends the spin */
    }
}
#endif

/* Lock the header mutex, repairing it if its owner died while holding it.
 * The slot table is only changed by single stores; the version state in
 * the segment file may be half-changed, so ch_repair tells the next
 * process that has it mapped to rebuild it (xac_seg.c). */
void xctl_lock(struct xctl *cx)
{
    pthread_mutex_t *m = &cx->cx_hdr->ch_lock;
    int rc = pthread_mutex_trylock(m);

    if (rc == EBUSY) {
        cx->cx_lock_busy++;
#if XCTL_CAN_SPIN
        if (cx->cx_spin_ns > 0 && spin_while_held(cx))
            rc = pthread_mutex_trylock(m);
#endif
        if (rc == 0)
            cx->cx_lock_spun++;
        else if (rc == EBUSY)
            rc = pthread_mutex_lock(m);
    }
    if (rc == EOWNERDEAD) {
        rc = pthread_mutex_consistent(&cx->cx_hdr->ch_lock);
        cx->cx_hdr->ch_repair = 1;
        __atomic_store_n(&cx->cx_hdr->ch_direct, 0, __ATOMIC_SEQ_CST);
        /* DURABLE: the owner logged a commit it did not publish.  The
         * record may reach the disk, so the shared state no longer
         * matches the log: fail until recovery. */
        if (cx->cx_hdr->ch_log_ready &&
            cx->cx_hdr->ch_log_tail_stamp > cx->cx_hdr->ch_commits)
            __atomic_store_n(&cx->cx_hdr->ch_log_failed, 1, __ATOMIC_SEQ_CST);
    }
    AZ(rc);
}

void xctl_unlock(struct xctl *cx)
{
    AZ(pthread_mutex_unlock(&cx->cx_hdr->ch_lock));
}

#define ctl_lock xctl_lock
#define ctl_unlock xctl_unlock

static int ctl_init_file(int fd, size_t psize)
{
    struct xctl_hdr h;
    pthread_mutexattr_t ma;
    size_t len = ctl_size(XCTL_SLOTS, psize);
    struct xctl_hdr *m;

    if (xos.ftruncate(fd, (off_t)len) != 0)
        return errno;
    m = xos.mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED)
        return errno;
    memset(&h, 0, sizeof h);
    h.ch_format = XCTL_FORMAT;
    h.ch_psize = (uint32_t)psize;
    h.ch_lock_size = (uint32_t)sizeof(pthread_mutex_t);
    h.ch_size = len;
    h.ch_next_txn = 1;
    h.ch_nslots = XCTL_SLOTS;
    h.ch_slotoff = ctl_slotoff();
    memcpy(m, &h, sizeof h);
    AZ(pthread_mutexattr_init(&ma));
    AZ(pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED));
    AZ(pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST));
    AZ(pthread_mutex_init(&m->ch_lock, &ma));
    AZ(pthread_mutexattr_destroy(&ma));
    /* The magic goes in last: a file without it is unfinished. */
    __atomic_store_n(&m->ch_magic, XCTL_MAGIC, __ATOMIC_RELEASE);
    AZ(xos.munmap(m, len));
    return 0;
}

/* A slot's owner is alive if its pid exists and started when it did. */
int xctl_slot_alive(const struct xctl_slot *s)
{
    if (__atomic_load_n(&s->cs_state, __ATOMIC_ACQUIRE) != XS_LIVE)
        return 0;
    if (xos.kill(s->cs_pid, 0) != 0 && errno == ESRCH)
        return 0;
    return xos_proc_start(s->cs_pid) == s->cs_start;
}

int xctl_open(struct xctl *cx, const char *dir, size_t psize)
{
    char path[4096];
    struct stat st;
    struct xctl_hdr *h;
    struct xctl_slot *slots;
    uint32_t i, mine = UINT32_MAX;
    pid_t pid = xos.getpid();
    int rc, dead;

    memset(cx, 0, sizeof *cx);
    cx->cx_fd = -1;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, XCTL_NAME) >=
        sizeof path)
        return ENAMETOOLONG;
    cx->cx_fd = xos.open(path, O_RDWR | O_CREAT, 0666);
    if (cx->cx_fd < 0)
        return errno;
    if (xos.flock(cx->cx_fd, LOCK_EX) != 0)
        goto fail_errno;
    if (xos.fstat(cx->cx_fd, &st) != 0)
        goto fail_errno;
    /* A file without its magic is unfinished (ctl_init_file writes it
     * last): after a power cut the header, written through a mapping and
     * never synced, may be zeros.  The control file holds no committed
     * data, so whoever holds the lock makes it again. */
    uint32_t magic = 0;
    if (st.st_size >= (off_t)sizeof(struct xctl_hdr) &&
        xos.pread(cx->cx_fd, &magic, sizeof magic,
                  (off_t)offsetof(struct xctl_hdr, ch_magic)) ==
            (ssize_t)sizeof magic &&
        magic == 0 && xos.ftruncate(cx->cx_fd, 0) == 0)
        st.st_size = 0;
    if (st.st_size == 0) {
        rc = ctl_init_file(cx->cx_fd, psize);
        if (rc != 0)
            goto fail;
        if (xos.fstat(cx->cx_fd, &st) != 0)
            goto fail_errno;
    }
    if ((size_t)st.st_size < sizeof(struct xctl_hdr)) {
        rc = XAC_EBADCTL;
        goto fail;
    }
    cx->cx_maplen = (size_t)st.st_size;
    h = xos.mmap(NULL, cx->cx_maplen, PROT_READ | PROT_WRITE, MAP_SHARED,
                 cx->cx_fd, 0);
    if (h == MAP_FAILED)
        goto fail_errno;
    cx->cx_hdr = h;
    if (h->ch_magic != XCTL_MAGIC || h->ch_format != XCTL_FORMAT ||
        h->ch_psize != psize ||
        h->ch_lock_size != sizeof(pthread_mutex_t) ||
        h->ch_size != cx->cx_maplen || h->ch_slotoff != ctl_slotoff() ||
        ctl_size(h->ch_nslots, psize) > cx->cx_maplen) {
        rc = XAC_EBADCTL;
        goto fail;
    }

    /* Dead slots are freed before we take one, but looked for before
     * ch_lock is ours: the running writers need it to commit. */
    cx->cx_slot = UINT32_MAX;
    dead = xctl_any_dead(cx, UINT32_MAX);
    ctl_lock(cx);
    slots = ctl_slots(cx);
    if (dead)
        xctl_reap(cx);
    for (i = 0; i < h->ch_nslots && mine == UINT32_MAX; i++)
        if (slots[i].cs_state != XS_LIVE)
            mine = i;
    if (mine != UINT32_MAX) {
        memset(&slots[mine], 0, sizeof slots[mine]);
        slots[mine].cs_pid = pid;
        slots[mine].cs_start = xos_proc_start(pid);
        __atomic_store_n(&slots[mine].cs_state, XS_LIVE, __ATOMIC_SEQ_CST);
        cx->cx_slot = mine;
        cx->cx_look = mine + 1; /* each process looks elsewhere first */
        if (mine >= h->ch_slot_hwm)
            __atomic_store_n(&h->ch_slot_hwm, mine + 1, __ATOMIC_SEQ_CST);
    }
    ctl_unlock(cx);
    if (mine == UINT32_MAX) {
        rc = XAC_EBUSY;
        goto fail;
    }
    AZ(xos.flock(cx->cx_fd, LOCK_UN));
    return 0;

fail_errno:
    rc = errno;
fail:
    if (cx->cx_hdr != NULL)
        xos.munmap(cx->cx_hdr, cx->cx_maplen);
    if (cx->cx_fd >= 0)
        xos.close(cx->cx_fd);
    memset(cx, 0, sizeof *cx);
    cx->cx_fd = -1;
    return rc;
}

void xctl_txn_ended(struct xctl *cx, struct xctl_slot *s)
{
    /* After the store to cs_txn (sequentially consistent, as the
     * sleeper's count is): a sleeper counted after this load sees the
     * new word and does not sleep.  One count for all slots: a wake
     * that finds nobody on our word costs a system call, and sleepers
     * are few (after a conflict abort only). */
    if (__atomic_load_n(&cx->cx_hdr->ch_rival_sleepers, __ATOMIC_SEQ_CST))
        xos.futex(xctl_txn_word(s), FUTEX_WAKE, INT_MAX, NULL);
}

/* Lower the high-water mark past the slots no live process holds. */
static void trim_hwm(struct xctl *cx)
{
    struct xctl_slot *slots = ctl_slots(cx);
    uint32_t hwm = cx->cx_hdr->ch_slot_hwm;

    while (hwm > 0 && slots[hwm - 1].cs_state != XS_LIVE)
        hwm--;
    __atomic_store_n(&cx->cx_hdr->ch_slot_hwm, hwm, __ATOMIC_SEQ_CST);
}

void xctl_close(struct xctl *cx)
{
    if (cx->cx_hdr != NULL) {
        ctl_lock(cx);
        struct xctl_slot *me = &ctl_slots(cx)[cx->cx_slot];
        __atomic_store_n(&me->cs_txn, 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&me->cs_state, XS_FREE, __ATOMIC_SEQ_CST);
        me->cs_pid = 0;
        me->cs_mapped = 0;
        /* No reap: the others reap when they need to, and a reap by each
         * of n leaving processes reads /proc n times n over. */
        trim_hwm(cx);
        ctl_unlock(cx);
        AZ(xos.munmap(cx->cx_hdr, cx->cx_maplen));
    }
    if (cx->cx_fd >= 0)
        xos.close(cx->cx_fd);
    memset(cx, 0, sizeof *cx);
    cx->cx_fd = -1;
}

void xctl_forget_contention(struct xctl *cx, uint32_t slot)
{
    struct xctl_hdr *h = cx->cx_hdr;
    struct xctl_slot *s = &ctl_slots(cx)[slot];
    uint32_t mine = slot + 1;

    if (__atomic_exchange_n(&s->cs_admitted, 0, __ATOMIC_SEQ_CST) != 0) {
        __atomic_fetch_sub(&h->ch_writers, 1, __ATOMIC_SEQ_CST);
        __atomic_fetch_add(&h->ch_admit_seq, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&h->ch_admit_waiters, __ATOMIC_SEQ_CST) != 0)
            xos.futex(&h->ch_admit_seq, FUTEX_WAKE, 1, NULL);
    }
    if (__atomic_load_n(&h->ch_irrev, __ATOMIC_SEQ_CST) == mine) {
        __atomic_store_n(&h->ch_irrev_txn, 0, __ATOMIC_SEQ_CST);
        if (__atomic_compare_exchange_n(&h->ch_irrev, &mine, 0, 0,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
            __atomic_fetch_add(&h->ch_irrev_seq, 1, __ATOMIC_SEQ_CST);
            if (__atomic_load_n(&h->ch_irrev_waiters, __ATOMIC_SEQ_CST) != 0)
                xos.futex(&h->ch_irrev_seq, FUTEX_WAKE, INT_MAX, NULL);
        }
    }
}

/* The owner of slot i died: its transaction (if any) is aborted by
 * forgetting it; its writer words become stale; it leaves the admitted
 * writers and frees the irrevocable token. */
static void free_dead(struct xctl *cx, uint32_t i)
{
    struct xctl_slot *s = &ctl_slots(cx)[i];

    __atomic_store_n(&s->cs_txn, 0, __ATOMIC_SEQ_CST);
    xctl_txn_ended(cx, s);
    xctl_forget_contention(cx, i);
    __atomic_store_n(&s->cs_state, XS_FREE, __ATOMIC_SEQ_CST);
    s->cs_mapped = 0;
    s->cs_pid = 0;
}

unsigned xctl_reap(struct xctl *cx)
{
    struct xctl_slot *slots = ctl_slots(cx);
    uint32_t i, hwm = cx->cx_hdr->ch_slot_hwm;
    unsigned n = 0;

    for (i = 0; i < hwm; i++) {
        if (slots[i].cs_state == XS_LIVE && !xctl_slot_alive(&slots[i])) {
            free_dead(cx, i);
            n++;
        }
    }
    trim_hwm(cx);
    return n;
}

int xctl_any_dead(struct xctl *cx, uint32_t n)
{
    struct xctl_slot *slots = ctl_slots(cx);
    uint32_t hwm = __atomic_load_n(&cx->cx_hdr->ch_slot_hwm, __ATOMIC_ACQUIRE);
    uint32_t i;

    if (n > hwm)
        n = hwm;
    for (; n > 0; n--) {
        i = cx->cx_look++ % hwm;
        /* Read while its owner may change: a slot taken meanwhile can look
         * dead (the reap asks again) or alive (the next look sees it). */
        if (i != cx->cx_slot &&
            __atomic_load_n(&slots[i].cs_state, __ATOMIC_ACQUIRE) == XS_LIVE &&
            !xctl_slot_alive(&slots[i]))
            return 1;
    }
    return 0;
}

int xctl_other_mapped(struct xctl *cx)
{
    struct xctl_slot *slots = ctl_slots(cx);
    uint32_t i, hwm = cx->cx_hdr->ch_slot_hwm;
    int found = 0;

    for (i = 0; i < hwm && !found; i++) {
        if (i == cx->cx_slot || slots[i].cs_state != XS_LIVE ||
            !slots[i].cs_mapped)
            continue;
        if (xctl_slot_alive(&slots[i]))
            found = 1;
        else
            free_dead(cx, i);
    }
    trim_hwm(cx);
    return found;
}
