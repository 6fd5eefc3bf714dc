/* xac_ctl.c: the shared control file (see xac_ctl.h, docs/libxac.md). */
#include "xac_ctl.h"

#include <errno.h>
#include <fcntl.h>
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

static uint32_t ctl_slotoff(void)
{
    return (uint32_t)((sizeof(struct xctl_hdr) + 63) & ~(size_t)63);
}

static struct xctl_slot *ctl_slots(struct xctl *cx)
{
    return (struct xctl_slot *)((char *)cx->cx_hdr + cx->cx_hdr->ch_slotoff);
}

/* Lock the header mutex, repairing it if its owner died while holding it.
 * Nothing guarded by it is left half-changed by a dead owner: slot changes
 * are single stores. */
static void ctl_lock(struct xctl *cx)
{
    int rc = pthread_mutex_lock(&cx->cx_hdr->ch_lock);
    if (rc == EOWNERDEAD)
        rc = pthread_mutex_consistent(&cx->cx_hdr->ch_lock);
    AZ(rc);
}

static void ctl_unlock(struct xctl *cx)
{
    AZ(pthread_mutex_unlock(&cx->cx_hdr->ch_lock));
}

static int ctl_init_file(int fd, size_t psize)
{
    struct xctl_hdr h;
    pthread_mutexattr_t ma;
    size_t len = ctl_size(XCTL_SLOTS_MIN, psize);
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
    h.ch_nslots = XCTL_SLOTS_MIN;
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
static int ctl_slot_alive(const struct xctl_slot *s)
{
    if (s->cs_state != XS_LIVE)
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
    int rc, others = 0;

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

    ctl_lock(cx);
    slots = ctl_slots(cx);
    for (i = 0; i < h->ch_nslots; i++) {
        if (slots[i].cs_state == XS_LIVE && !ctl_slot_alive(&slots[i]))
            memset(&slots[i], 0, sizeof slots[i]); /* owner died */
        if (slots[i].cs_state == XS_LIVE)
            others++;
        else if (mine == UINT32_MAX)
            mine = i;
    }
    /* Growing the slot table is for issue B (many processes); with one
     * process, XCTL_SLOTS_MIN free slots always remain. */
    if (others == 0 && mine != UINT32_MAX) {
        slots[mine].cs_pid = pid;
        slots[mine].cs_start = xos_proc_start(pid);
        slots[mine].cs_txn = 0;
        slots[mine].cs_snapshot = 0;
        slots[mine].cs_state = XS_LIVE;
        cx->cx_slot = mine;
    }
    ctl_unlock(cx);
    if (others != 0 || mine == UINT32_MAX) {
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

void xctl_close(struct xctl *cx)
{
    if (cx->cx_hdr != NULL) {
        ctl_lock(cx);
        memset(&ctl_slots(cx)[cx->cx_slot], 0, sizeof(struct xctl_slot));
        ctl_unlock(cx);
        AZ(xos.munmap(cx->cx_hdr, cx->cx_maplen));
    }
    if (cx->cx_fd >= 0)
        xos.close(cx->cx_fd);
    memset(cx, 0, sizeof *cx);
    cx->cx_fd = -1;
}

uint64_t xctl_txn_begin(struct xctl *cx)
{
    struct xctl_slot *s = &ctl_slots(cx)[cx->cx_slot];
    uint64_t id =
        __atomic_fetch_add(&cx->cx_hdr->ch_next_txn, 1, __ATOMIC_ACQ_REL);

    s->cs_snapshot = __atomic_load_n(&cx->cx_hdr->ch_commits,
                                     __ATOMIC_ACQUIRE);
    __atomic_store_n(&s->cs_txn, id, __ATOMIC_RELEASE);
    return id;
}

void xctl_txn_end(struct xctl *cx, int committed)
{
    struct xctl_slot *s = &ctl_slots(cx)[cx->cx_slot];

    if (committed)
        __atomic_fetch_add(&cx->cx_hdr->ch_commits, 1, __ATOMIC_ACQ_REL);
    __atomic_store_n(&s->cs_txn, 0, __ATOMIC_RELEASE);
}
