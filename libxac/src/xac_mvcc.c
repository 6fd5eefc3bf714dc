/* xac_mvcc.c: multiversion concurrency control across processes.
 *
 * docs/libxac.md describes the design and docs/libxac-serializability.md
 * argues that it is serializable.  In short:
 *
 * - Every transaction takes a snapshot (the commit clock ch_commits) at
 *   xbegin and reads, for each page, the newest version whose commit stamp
 *   is <= its snapshot.  The data file holds one version of each page (stamp
 *   pe_ts); newer versions live in the version pool "xac.pool", one page
 *   frame each, linked newest first from the page table entry (pe_head).
 * - Versions are immutable while a transaction may still map them: a commit
 *   never overwrites the data file while another transaction runs (then it
 *   writes new versions into the pool), and the garbage collector copies a
 *   version into the data file only when every running snapshot reads that
 *   version or a newer one.  Frames leaving a chain wait in "limbo" until
 *   every transaction that may have mapped them has ended.
 * - xend validates under ch_lock that no touched page got a version newer
 *   than the snapshot (backward validation), then publishes the writeset
 *   with stamp clock+1: the serialization order is the commit order.
 *   Read-only transactions serialize at their snapshot and never validate.
 * - Writers take a per-page writer word (pe_owner) at their first write;
 *   a conflict there is settled by the conflict policy (self-abort,
 *   oldest-wins, requester-wins, polite).  That is only the policy: the
 *   validation alone guarantees serializability.
 *
 * Shared layout of "xac.seg" (format 1): struct xseg_hdr, page table (one
 * struct xpe per page), frame table (struct xfr per frame), ring of pages
 * that have pool versions (GC order).  It is mapped MAP_SHARED and is
 * sparse: only entries that are used take disk blocks.  ch_lock (in
 * xac.ctl) guards everything but pe_owner (compare-and-swap) and the cs_
 * fields a process sets for itself.  Readers walk chains without the lock.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdio.h>
#include <time.h>

#include "xac.h"
#include "xac_assert.h"
#include "xac_int.h"
#include "xac_os.h"

#define XSEG_MAGIC 0x47455358u /* "XSEG" in a little-endian dump */
#define XSEG_FORMAT 1u
#define XSEG_NAME "xac.seg"
#define XPOOL_NAME "xac.pool"
#define XSEG_PATHMAX 4096

struct xseg_hdr {
    uint32_t sh_magic;      /* XSEG_MAGIC, written last */
    uint32_t sh_format;     /* XSEG_FORMAT */
    uint32_t sh_psize;      /* page size */
    uint32_t sh_clean;      /* every version is in the data file */
    uint64_t sh_npages;     /* segment length in pages */
    uint64_t sh_maxframes;  /* frames in the pool file (frame 0 unused) */
    uint64_t sh_dev;        /* identity of the data file */
    uint64_t sh_ino;
    uint64_t sh_pgoff;      /* offset of the page table */
    uint64_t sh_froff;      /* offset of the frame table */
    uint64_t sh_ringoff;    /* offset of the ring */
    uint64_t sh_size;       /* size of xac.seg */
    uint32_t sh_nframes;    /* frames [1, nframes) have been used */
    uint32_t sh_free;       /* free list (via fr_lnext), 0 = empty */
    uint32_t sh_limbo_head; /* limbo FIFO (via fr_lnext) */
    uint32_t sh_limbo_tail;
    uint64_t sh_ring_head;  /* ring FIFO positions (mod npages + 1) */
    uint64_t sh_ring_tail;
    char sh_path[XSEG_PATHMAX]; /* data file, for recovery by the next
                                 * first process */
};

struct xpe {
    uint64_t pe_owner;  /* writer word: (txn id << 16) | slot, 0 = none */
    uint64_t pe_newest; /* stamp of the newest committed version */
    uint64_t pe_ts;     /* stamp of the version in the data file */
    uint32_t pe_head;   /* newest pool version, 0 = none */
    uint32_t pe_ring;   /* the page is in the ring */
};

enum { FR_FREE = 0, FR_ALLOC = 1, FR_CHAIN = 2, FR_LIMBO = 3 };

struct xfr {
    uint64_t fr_ts;     /* commit stamp of the version */
    uint64_t fr_stamp;  /* limbo: ch_next_txn when it left its chain */
    uint32_t fr_page;   /* page it is a version of */
    uint32_t fr_next;   /* next older version of the page, 0 = data file */
    uint32_t fr_lnext;  /* free list / limbo FIFO link */
    uint32_t fr_state;  /* FR_* */
};

#define LD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define ST(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)

#define OWNER(id, slot) (((id) << 16) | (uint64_t)(slot))
#define OWNER_SLOT(w) ((uint32_t)((w)&0xffff))
#define OWNER_ID(w) ((w) >> 16)

static struct xctl_hdr *ch(struct xac_env *e)
{
    return e->xe_ctl.cx_hdr;
}

static struct xctl_slot *myslot(struct xac_env *e)
{
    return &xctl_slots(&e->xe_ctl)[e->xe_ctl.cx_slot];
}

static size_t rnd(size_t n, size_t ps)
{
    return (n + ps - 1) & ~(ps - 1);
}

/* ---- locking and repair ---------------------------------------------- */

static void repair(struct xac_env *e);
static void release_owned(struct xac_env *e);

static void mv_lock(struct xac_env *e)
{
    xctl_lock(&e->xe_ctl);
    if (ch(e)->ch_repair && e->xe_seg != NULL) {
        repair(e);
        ch(e)->ch_repair = 0;
    }
    if (e->xe_reap) {
        e->xe_reap = 0;
        xctl_reap(&e->xe_ctl);
    }
}

static void mv_unlock(struct xac_env *e)
{
    xctl_unlock(&e->xe_ctl);
}

static void limbo_put(struct xac_env *e, uint32_t f, uint64_t stamp)
{
    struct xseg_hdr *h = e->xe_seg;
    struct xfr *fr = &e->xe_fr[f];

    fr->fr_state = FR_LIMBO;
    fr->fr_stamp = stamp;
    fr->fr_lnext = 0;
    if (h->sh_limbo_tail != 0)
        e->xe_fr[h->sh_limbo_tail].fr_lnext = f;
    else
        h->sh_limbo_head = f;
    h->sh_limbo_tail = f;
}

static void free_put(struct xac_env *e, uint32_t f)
{
    e->xe_fr[f].fr_state = FR_FREE;
    e->xe_fr[f].fr_lnext = e->xe_seg->sh_free;
    e->xe_seg->sh_free = f;
}

static void ring_push(struct xac_env *e, uint32_t pg)
{
    struct xseg_hdr *h = e->xe_seg;
    uint64_t cap = h->sh_npages + 1;

    if (e->xe_pt[pg].pe_ring)
        return;
    XASSERT(h->sh_ring_tail - h->sh_ring_head < cap);
    e->xe_ring[h->sh_ring_tail % cap] = pg;
    e->xe_pt[pg].pe_ring = 1;
    h->sh_ring_tail++;
}

/* A process died holding ch_lock.  Rebuild everything the lock guards
 * from the frame states and the chains: unlink versions of a commit that
 * never published, rebuild the free list, the limbo FIFO and the ring. */
static void repair(struct xac_env *e)
{
    struct xseg_hdr *h = e->xe_seg;
    uint64_t clock = LD(&ch(e)->ch_commits), stamp = LD(&ch(e)->ch_next_txn);
    uint32_t f, g, n = h->sh_nframes;
    uint64_t pg;

    /* Versions newer than the clock belong to an unfinished commit; they
     * are at the heads of their chains. */
    for (f = 1; f < n; f++) {
        struct xfr *fr = &e->xe_fr[f];
        if (fr->fr_state == FR_CHAIN && fr->fr_ts > clock) {
            struct xpe *pe = &e->xe_pt[fr->fr_page];
            if (pe->pe_head == f) {
                ST(&pe->pe_head, fr->fr_next);
                ST(&pe->pe_newest, fr->fr_next != 0
                                       ? e->xe_fr[fr->fr_next].fr_ts
                                       : pe->pe_ts);
            }
            fr->fr_state = FR_ALLOC;
        }
    }
    h->sh_free = 0;
    h->sh_limbo_head = h->sh_limbo_tail = 0;
    for (f = 1; f < n; f++) {
        struct xfr *fr = &e->xe_fr[f];
        if (fr->fr_state == FR_CHAIN)
            continue;
        /* Readers may still be walking through an unlinked frame, so it
         * waits in limbo like any other. */
        if (fr->fr_state == FR_ALLOC || fr->fr_state == FR_LIMBO)
            limbo_put(e, f, stamp);
        else
            free_put(e, f);
    }
    for (pg = h->sh_ring_head; pg != h->sh_ring_tail; pg++)
        e->xe_pt[e->xe_ring[pg % (h->sh_npages + 1)]].pe_ring = 0;
    for (f = 1; f < n; f++)
        if (e->xe_fr[f].fr_page < h->sh_npages)
            e->xe_pt[e->xe_fr[f].fr_page].pe_ring = 0;
    h->sh_ring_head = h->sh_ring_tail = 0;
    for (f = 1; f < n; f++) {
        g = e->xe_fr[f].fr_page;
        if (e->xe_fr[f].fr_state == FR_CHAIN && e->xe_pt[g].pe_head == f)
            ring_push(e, g);
    }
    ch(e)->ch_inprog = 0;
}

/* ---- copying versions ------------------------------------------------ */

/* Copy frame f into page pg of the data file datafd. */
static int frame_to_data(struct xac_env *e, int datafd, uint32_t f,
                         uint64_t pg)
{
    int rc = xos_read_all(e->xe_poolfd, e->xe_buf, e->xe_psize,
                          (off_t)f << e->xe_pshift, 0);
    if (rc == 0)
        rc = xos_write_all(datafd, e->xe_buf, e->xe_psize,
                           (off_t)pg << e->xe_pshift);
    return rc;
}

/* ---- garbage collection ---------------------------------------------- */

/* Oldest snapshot and oldest transaction id among the other running
 * transactions (ours is ending when we collect). */
static void oldest(struct xac_env *e, uint64_t *snap, uint64_t *id)
{
    struct xctl_slot *s = xctl_slots(&e->xe_ctl);
    uint32_t i, hwm = LD(&ch(e)->ch_slot_hwm);
    uint64_t t;

    *snap = LD(&ch(e)->ch_commits);
    *id = UINT64_MAX;
    for (i = 0; i < hwm; i++) {
        if (i == e->xe_ctl.cx_slot)
            continue;
        t = LD(&s[i].cs_txn);
        if (t == 0)
            continue;
        if (t < *id)
            *id = t;
        t = LD(&s[i].cs_snapshot);
        if (t < *snap)
            *snap = t;
    }
}

/* Write the newest version of pg with stamp <= m into the data file and
 * move it and every older frame to limbo. */
static int writeback(struct xac_env *e, int datafd, uint32_t pg, uint64_t m)
{
    struct xpe *pe = &e->xe_pt[pg];
    uint32_t f = pe->pe_head, prev = 0, g, next;
    uint64_t stamp;
    int rc;

    while (f != 0 && e->xe_fr[f].fr_ts > m) {
        prev = f;
        f = e->xe_fr[f].fr_next;
    }
    if (f == 0)
        return 0;
    rc = frame_to_data(e, datafd, f, pg);
    if (rc != 0)
        return rc;
    /* Data first, then the stamp, then the cut: a reader that no longer
     * finds the frame finds its contents in the data file. */
    ST(&pe->pe_ts, e->xe_fr[f].fr_ts);
    if (prev != 0)
        ST(&e->xe_fr[prev].fr_next, 0);
    else
        ST(&pe->pe_head, 0);
    stamp = LD(&ch(e)->ch_next_txn);
    for (g = f; g != 0; g = next) {
        next = e->xe_fr[g].fr_next;
        limbo_put(e, g, stamp);
    }
    return 0;
}

static void limbo_reclaim(struct xac_env *e, uint64_t minid)
{
    struct xseg_hdr *h = e->xe_seg;
    uint32_t f;

    while ((f = h->sh_limbo_head) != 0 && e->xe_fr[f].fr_stamp <= minid) {
        h->sh_limbo_head = e->xe_fr[f].fr_lnext;
        if (h->sh_limbo_head == 0)
            h->sh_limbo_tail = 0;
        free_put(e, f);
    }
}

uint64_t xmv_wb_limit(struct xac_env *e, uint64_t m)
{
    uint64_t d;

    if (!e->xe_durable)
        return m;
    d = LD(&ch(e)->ch_log_dstamp);
    return d < m ? d : m;
}

/* Collect up to budget pages of the ring (all if budget is 0).  Call with
 * ch_lock held. */
static int gc(struct xac_env *e, uint64_t budget)
{
    struct xseg_hdr *h = e->xe_seg;
    uint64_t cap = h->sh_npages + 1, m, minid, k, n;
    uint32_t pg;
    int rc = 0;

    oldest(e, &m, &minid);
    m = xmv_wb_limit(e, m);
    n = h->sh_ring_tail - h->sh_ring_head;
    if (budget == 0 || budget > n)
        budget = n;
    for (k = 0; k < budget && rc == 0; k++) {
        pg = e->xe_ring[h->sh_ring_head % cap];
        h->sh_ring_head++;
        e->xe_pt[pg].pe_ring = 0;
        rc = writeback(e, e->xe_fd, pg, m);
        if (e->xe_pt[pg].pe_head != 0)
            ring_push(e, pg);
    }
    oldest(e, &m, &minid);
    limbo_reclaim(e, minid);
    return rc;
}

static uint32_t frame_alloc(struct xac_env *e)
{
    struct xseg_hdr *h = e->xe_seg;
    uint32_t f = h->sh_free;

    if (f != 0) {
        e->xe_fr[f].fr_state = FR_ALLOC;
        h->sh_free = e->xe_fr[f].fr_lnext;
        return f;
    }
    if (h->sh_nframes < h->sh_maxframes) {
        f = h->sh_nframes;
        e->xe_fr[f].fr_state = FR_ALLOC;
        h->sh_nframes = f + 1;
        return f;
    }
    return 0;
}

/* ---- attach and detach ----------------------------------------------- */

static int path_in(char *buf, size_t n, const char *dir, const char *name)
{
    return (size_t)snprintf(buf, n, "%s/%s", dir, name) >= n ? ENAMETOOLONG
                                                              : 0;
}

/* Every committed version into the data file (no transaction runs). */
static int flush_all(struct xac_env *e, int datafd)
{
    struct xseg_hdr *h = e->xe_seg;
    uint64_t clock = xmv_wb_limit(e, LD(&ch(e)->ch_commits));
    uint32_t f, n = h->sh_nframes;
    int rc = 0, r;

    for (f = 1; f < n; f++) {
        struct xfr *fr = &e->xe_fr[f];
        if (fr->fr_state == FR_CHAIN && fr->fr_page < h->sh_npages &&
            e->xe_pt[fr->fr_page].pe_head == f) {
            r = writeback(e, datafd, fr->fr_page, clock);
            if (rc == 0)
                rc = r;
        }
    }
    return rc;
}

static void seg_unmap(struct xac_env *e)
{
    if (e->xe_seg != NULL)
        xos.munmap(e->xe_seg, e->xe_seglen);
    if (e->xe_segfd >= 0)
        xos.close(e->xe_segfd);
    if (e->xe_poolfd >= 0)
        xos.close(e->xe_poolfd);
    free(e->xe_buf);
    e->xe_seg = NULL;
    e->xe_pt = NULL;
    e->xe_fr = NULL;
    e->xe_ring = NULL;
    e->xe_buf = NULL;
    e->xe_segfd = e->xe_poolfd = -1;
    e->xe_seglen = 0;
}

static int seg_map(struct xac_env *e, size_t len)
{
    struct xseg_hdr *h;

    h = xos.mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, e->xe_segfd,
                 0);
    if (h == MAP_FAILED)
        return errno;
    e->xe_seg = h;
    e->xe_seglen = len;
    e->xe_pt = (struct xpe *)((char *)h + h->sh_pgoff);
    e->xe_fr = (struct xfr *)((char *)h + h->sh_froff);
    e->xe_ring = (uint32_t *)((char *)h + h->sh_ringoff);
    return 0;
}

/* Is the existing segment file one we can read? */
static int seg_valid(struct xac_env *e, const struct stat *sst)
{
    struct xseg_hdr h;

    if ((size_t)sst->st_size < sizeof h ||
        xos_read_all(e->xe_segfd, (char *)&h, sizeof h, 0, 0) != 0)
        return 0;
    return h.sh_magic == XSEG_MAGIC && h.sh_format == XSEG_FORMAT &&
           h.sh_psize == e->xe_psize && h.sh_size == (uint64_t)sst->st_size;
}

/* The previous processes left versions in the pool (they died, or did
 * not xMunmap): write them into their data file before starting over. */
static void recover_old(struct xac_env *e, const struct stat *sst,
                        const struct stat *dst)
{
    int fd, rc;

    if (seg_map(e, (size_t)sst->st_size) != 0)
        return;
    if (!e->xe_seg->sh_clean) {
        if (e->xe_seg->sh_dev == (uint64_t)dst->st_dev &&
            e->xe_seg->sh_ino == (uint64_t)dst->st_ino) {
            fd = e->xe_fd;
        } else {
            e->xe_seg->sh_path[XSEG_PATHMAX - 1] = '\0';
            fd = xos.open(e->xe_seg->sh_path, O_RDWR, 0);
        }
        if (fd >= 0) {
            rc = flush_all(e, fd);
            if (rc == 0 && xos.fdatasync(fd) == 0)
                e->xe_seg->sh_clean = 1;
            if (fd != e->xe_fd)
                xos.close(fd);
        }
    }
    xos.munmap(e->xe_seg, e->xe_seglen);
    e->xe_seg = NULL;
    e->xe_seglen = 0;
}

static int seg_create(struct xac_env *e, const struct stat *dst,
                      const char *name)
{
    struct xseg_hdr h;
    size_t ps = e->xe_psize;
    uint64_t np = e->xe_npages, maxf;
    char *abs;

    memset(&h, 0, sizeof h);
    maxf = 2 * np + 4096;
    if (maxf > ((uint64_t)1 << 31))
        maxf = (uint64_t)1 << 31;
    h.sh_format = XSEG_FORMAT;
    h.sh_psize = (uint32_t)ps;
    h.sh_npages = np;
    h.sh_maxframes = maxf;
    h.sh_dev = (uint64_t)dst->st_dev;
    h.sh_ino = (uint64_t)dst->st_ino;
    h.sh_pgoff = rnd(sizeof h, ps);
    h.sh_froff = h.sh_pgoff + rnd(np * sizeof(struct xpe), ps);
    h.sh_ringoff = h.sh_froff + rnd(maxf * sizeof(struct xfr), ps);
    h.sh_size = h.sh_ringoff + rnd((np + 1) * sizeof(uint32_t), ps);
    h.sh_nframes = 1;
    abs = realpath(name, NULL);
    if (abs != NULL) {
        if (strlen(abs) < XSEG_PATHMAX)
            memcpy(h.sh_path, abs, strlen(abs) + 1);
        free(abs);
    }
    /* Truncating to 0 first zeroes every old entry. */
    if (xos.ftruncate(e->xe_segfd, 0) != 0 ||
        xos.ftruncate(e->xe_segfd, (off_t)h.sh_size) != 0 ||
        xos.ftruncate(e->xe_poolfd, 0) != 0 ||
        xos.ftruncate(e->xe_poolfd, (off_t)(maxf << e->xe_pshift)) != 0)
        return errno;
    if (xos_write_all(e->xe_segfd, (char *)&h, sizeof h, 0) != 0)
        return errno;
    h.sh_magic = XSEG_MAGIC;
    return xos_write_all(e->xe_segfd, (char *)&h.sh_magic,
                         sizeof h.sh_magic,
                         0);
}

/* As the first process to map the file: let the kernel drop the file's
 * clean cached pages (it writes the dirty ones back first).  Whoever
 * touched the file through a plain mmap() before (a program creating it,
 * say) left large folios read ahead around the fault and a readahead mark
 * in them; POSIX_FADV_RANDOM does not stop the mark from reading ahead
 * again, in more large folios, each time a load reaches it, and a 4 KiB
 * pwrite of a committed page into a large folio costs several times one
 * into a small one (docs/libxac-durability.md).  Reloaded pages come back
 * one small folio each.  Best effort: a hint. */
static void drop_file_cache(struct xac_env *e)
{
    (void)xos.fadvise(e->xe_fd, 0, 0, POSIX_FADV_DONTNEED);
}

int xmv_attach(struct xac_env *e)
{
    struct xctl *cx = &e->xe_ctl;
    struct xctl_slot *s = xctl_slots(cx);
    char path[4096];
    struct stat sst, dst;
    uint32_t i, hwm;
    int rc, others = 0;

    e->xe_segfd = e->xe_poolfd = -1;
    if (xos.fstat(e->xe_fd, &dst) != 0)
        return errno;
    e->xe_buf = malloc(e->xe_psize);
    if (e->xe_buf == NULL)
        return ENOMEM;
    if (xos.flock(cx->cx_fd, LOCK_EX) != 0) {
        rc = errno;
        goto fail;
    }
    rc = path_in(path, sizeof path, e->xe_dir, XSEG_NAME);
    if (rc != 0)
        goto fail_unlock;
    e->xe_segfd = xos.open(path, O_RDWR | O_CREAT, 0666);
    rc = path_in(path, sizeof path, e->xe_dir, XPOOL_NAME);
    if (rc != 0)
        goto fail_unlock;
    e->xe_poolfd = xos.open(path, O_RDWR | O_CREAT, 0666);
    if (e->xe_segfd < 0 || e->xe_poolfd < 0 ||
        xos.fstat(e->xe_segfd, &sst) != 0) {
        rc = errno;
        goto fail_unlock;
    }
    mv_lock(e);
    xctl_reap(cx);
    hwm = ch(e)->ch_slot_hwm;
    for (i = 0; i < hwm; i++)
        if (i != cx->cx_slot && s[i].cs_state == XS_LIVE && s[i].cs_mapped)
            others++;
    mv_unlock(e);
    if (others > 0) {
        /* Join: same file, same length, same durability. */
        if (e->xe_durable != (LD(&ch(e)->ch_log_ready) &&
                              LD(&ch(e)->ch_log_mapped_since))) {
            rc = EBUSY;
            goto fail_unlock;
        }
        if (!seg_valid(e, &sst)) {
            rc = XAC_EBADCTL;
            goto fail_unlock;
        }
        rc = seg_map(e, (size_t)sst.st_size);
        if (rc != 0)
            goto fail_unlock;
        if (e->xe_seg->sh_dev != (uint64_t)dst.st_dev ||
            e->xe_seg->sh_ino != (uint64_t)dst.st_ino ||
            e->xe_seg->sh_npages != e->xe_npages) {
            rc = EBUSY;
            goto fail_unlock;
        }
    } else if (e->xe_durable) {
        /* The log, not the pool, is the truth: replay it (unless recovery
         * ran since the last process had the file mapped). */
        if (!LD(&ch(e)->ch_log_ready) || LD(&ch(e)->ch_log_mapped_since)) {
            rc = xlog_recover(e, e->xe_fd, e->xe_name);
            if (rc != 0)
                goto fail_unlock;
        }
        ST(&ch(e)->ch_log_mapped_since, 1);
    } else {
        if (seg_valid(e, &sst))
            recover_old(e, &sst, &dst);
        ST(&ch(e)->ch_log_ready, 0);
    }
    if (others == 0) {
        rc = seg_create(e, &dst, e->xe_name);
        if (rc != 0)
            goto fail_unlock;
        if (xos.fstat(e->xe_segfd, &sst) != 0) {
            rc = errno;
            goto fail_unlock;
        }
        rc = seg_map(e, (size_t)sst.st_size);
        if (rc != 0)
            goto fail_unlock;
        mv_lock(e);
        ch(e)->ch_repair = 0;
        ch(e)->ch_inprog = 0;
        mv_unlock(e);
        drop_file_cache(e);
    }
    ST(&s[cx->cx_slot].cs_mapped, 1);
    AZ(xos.flock(cx->cx_fd, LOCK_UN));
    return 0;

fail_unlock:
    xos.flock(cx->cx_fd, LOCK_UN);
fail:
    seg_unmap(e);
    return rc;
}

int xmv_detach(struct xac_env *e)
{
    struct xctl *cx = &e->xe_ctl;
    struct xctl_slot *s = xctl_slots(cx);
    uint32_t i, hwm;
    int rc = 0, others = 0;

    uint64_t lim = 0;
    int failed;

    if (e->xe_seg == NULL)
        return 0;
    xos.flock(cx->cx_fd, LOCK_EX);
    if (e->xe_durable)
        xlog_sync_all(e); /* a failure shows as the failed state */
    mv_lock(e);
    xctl_reap(cx);
    hwm = ch(e)->ch_slot_hwm;
    for (i = 0; i < hwm; i++)
        if (i != cx->cx_slot && s[i].cs_state == XS_LIVE && s[i].cs_mapped)
            others++;
    ST(&s[cx->cx_slot].cs_mapped, 0);
    failed = xlog_failed(e);
    if (others == 0 && !failed) {
        lim = xmv_wb_limit(e, LD(&ch(e)->ch_commits));
        rc = flush_all(e, e->xe_fd);
        if (rc == 0 && !e->xe_durable)
            e->xe_seg->sh_clean = 1;
    }
    mv_unlock(e);
    if (e->xe_durable && others == 0 && !failed && rc == 0) {
        /* A checkpoint: the data file holds every commit up to lim. */
        if (xos.fdatasync(e->xe_fd) != 0) {
            rc = errno;
            xlog_fail(e);
        } else {
            rc = xlog_write_checkpoint(e, lim);
        }
    } else if (e->xe_durable && failed) {
        rc = XAC_EIO;
    }
    xos.flock(cx->cx_fd, LOCK_UN);
    seg_unmap(e);
    return rc;
}

int xmv_checkpoint(struct xac_env *e)
{
    int rc;

    uint64_t m, minid;

    if (e->xe_seg == NULL)
        return 0;
    if (e->xe_durable) {
        if (xlog_failed(e))
            return XAC_EIO;
        rc = xlog_sync_all(e);
        if (rc != 0)
            return rc;
    }
    mv_lock(e);
    oldest(e, &m, &minid);
    m = xmv_wb_limit(e, m);
    rc = gc(e, 0);
    mv_unlock(e);
    if (!e->xe_durable)
        return rc;
    if (rc != 0 || xos.fdatasync(e->xe_fd) != 0) {
        /* Never trust a later sync of pages whose write-back failed. */
        rc = rc != 0 ? rc : errno;
        xlog_fail(e);
        return rc;
    }
    return xlog_write_checkpoint(e, m);
}

/* ---- transactions ---------------------------------------------------- */

void xmv_begin(struct xac_env *e)
{
    struct xctl_hdr *h = ch(e);
    struct xctl_slot *s = myslot(e);
    uint64_t id = __atomic_fetch_add(&h->ch_next_txn, 1, __ATOMIC_SEQ_CST);
    uint64_t snap;

    if (LD(&h->ch_repair) && e->xe_seg != NULL) {
        mv_lock(e);
        mv_unlock(e);
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
    e->xe_txn = id;
    e->xe_snap = snap;
    if (e->xe_durable)
        xlog_note_cpu(e); /* for a sibling choosing the sync leader */
}

uint32_t xmv_find(struct xac_env *e, uint32_t pg, uint64_t snap)
{
    uint32_t f = LD(&e->xe_pt[pg].pe_head);

    while (f != 0 && LD(&e->xe_fr[f].fr_ts) > snap)
        f = LD(&e->xe_fr[f].fr_next);
    return f;
}

uint64_t xmv_newest(struct xac_env *e, uint32_t pg)
{
    return LD(&e->xe_pt[pg].pe_newest);
}

int xmv_doomed(struct xac_env *e)
{
    return LD(&myslot(e)->cs_doom) == e->xe_txn;
}

/* Is the transaction named by writer word w still running? */
static int owner_running(struct xac_env *e, uint64_t w, int check_alive)
{
    struct xctl_slot *s = &xctl_slots(&e->xe_ctl)[OWNER_SLOT(w)];

    if (OWNER_SLOT(w) >= ch(e)->ch_nslots || LD(&s->cs_txn) != OWNER_ID(w))
        return 0;
    if (check_alive && !xctl_slot_alive(s)) {
        e->xe_reap = 1;
        return 0;
    }
    return 1;
}

static void doom(struct xac_env *e, uint64_t w)
{
    ST(&xctl_slots(&e->xe_ctl)[OWNER_SLOT(w)].cs_doom, OWNER_ID(w));
}

static void nap(unsigned us)
{
    struct timespec ts = {0, (long)us * 1000L};
    xos.nanosleep(&ts, NULL);
}

int xmv_acquire(struct xac_env *e, uint32_t pg)
{
    uint64_t *wp = &e->xe_pt[pg].pe_owner;
    uint64_t mine = OWNER(e->xe_txn, e->xe_ctl.cx_slot), cur;
    unsigned tries = 0;

    for (;;) {
        cur = LD(wp);
        if (cur == mine)
            return 1;
        if (cur != 0 && owner_running(e, cur, 0)) {
            int win;
            switch (e->xe_policy) {
            case XAC_POLICY_OLDEST_WINS:
                win = e->xe_txn < OWNER_ID(cur);
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
                e->xe_failed = 1;
                e->xe_conflict = 1;
                return 0;
            }
            if (win)
                doom(e, cur);
        }
        if (__atomic_compare_exchange_n(wp, &cur, mine, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST))
            return 1;
    }
}

int xmv_stale(struct xac_env *e)
{
    size_t i;

    /* Page stamps never pass the commit clock. */
    if (LD(&ch(e)->ch_commits) == e->xe_snap)
        return 0;
    for (i = 0; i < e->xe_ntouched; i++)
        if (xmv_newest(e, e->xe_touched[i]) > e->xe_snap)
            return 1;
    /* Kept pages are read without a fault, so any of them may be in the
     * readset.  (Only when a process attached while this transaction ran:
     * xbegin revokes kept pages otherwise.) */
    for (i = 0; i < e->xe_nkept; i++)
        if ((e->xe_pstate[e->xe_kept[i]] & XP_KEPT) &&
            xmv_newest(e, e->xe_kept[i]) > e->xe_snap)
            return 1;
    return 0;
}

int xmv_extend(struct xac_env *e)
{
    uint64_t now = LD(&ch(e)->ch_commits);

    /* Every page read so far must still be current: then the reads are
     * those of the newer snapshot too (the timestamp extension of LSA and
     * TL2).  xmv_stale checks exactly that against the old snapshot. */
    if (now == e->xe_snap || xmv_stale(e))
        return 0;
    e->xe_snap = now;
    ST(&myslot(e)->cs_snapshot, now);
    e->xe_extensions++;
    return 1;
}

int xmv_alone(struct xac_env *e)
{
    struct xctl_slot *s = xctl_slots(&e->xe_ctl);
    uint32_t i, hwm = LD(&ch(e)->ch_slot_hwm);

    for (i = 0; i < hwm; i++)
        if (i != e->xe_ctl.cx_slot && LD(&s[i].cs_pid) != 0)
            return 0;
    return 1;
}

/* Is any other transaction running?  Called with ch_direct set. */
static int others_running(struct xac_env *e)
{
    struct xctl_slot *s = xctl_slots(&e->xe_ctl);
    uint32_t i, hwm = LD(&ch(e)->ch_slot_hwm);

    for (i = 0; i < hwm; i++)
        if (i != e->xe_ctl.cx_slot && LD(&s[i].cs_txn) != 0)
            return 1;
    return 0;
}

static int written(struct xac_env *e, uint32_t pg)
{
    return (e->xe_pstate[pg] & XP_LEVEL) == XP_WRITE;
}

/* No other transaction runs: write the writeset into the data file. */
static int commit_direct(struct xac_env *e, uint64_t c)
{
    uint32_t *t = e->xe_touched;
    size_t n = e->xe_ntouched, i, j;
    uint64_t stamp = LD(&ch(e)->ch_next_txn);
    struct xpe *pe;
    uint32_t g, next;
    int rc = 0, r;

    for (i = 0; i < n; i = j) {
        if (!written(e, t[i])) {
            j = i + 1;
            continue;
        }
        for (j = i + 1; j < n && t[j] == t[j - 1] + 1 && written(e, t[j]);
             j++)
            ;
        r = xos_write_all(e->xe_fd,
                          e->xe_back + ((size_t)t[i] << e->xe_pshift),
                          (size_t)(j - i) << e->xe_pshift,
                          (off_t)t[i] << e->xe_pshift);
        if (rc == 0)
            rc = r;
    }
    for (i = 0; i < n; i++) {
        if (!written(e, t[i]))
            continue;
        pe = &e->xe_pt[t[i]];
        for (g = pe->pe_head; g != 0; g = next) {
            next = e->xe_fr[g].fr_next;
            limbo_put(e, g, stamp);
        }
        ST(&pe->pe_head, 0);
        ST(&pe->pe_ts, c);
        ST(&pe->pe_newest, c);
    }
    return rc;
}

/* Other transactions run: the writeset becomes new versions in the pool. */
static int commit_pool(struct xac_env *e, uint64_t c, size_t nw)
{
    uint32_t *t = e->xe_touched, *fl, f;
    size_t n = e->xe_ntouched, i, k = 0;
    struct xpe *pe;
    int rc = 0, tried = 0;

    fl = malloc((nw ? nw : 1) * sizeof *fl);
    if (fl == NULL)
        return ENOMEM;
    while (k < nw) {
        f = frame_alloc(e);
        if (f == 0) {
            if (tried++ > 1)
                break;
            xctl_reap(&e->xe_ctl);
            gc(e, 0);
            continue;
        }
        fl[k++] = f;
    }
    if (k < nw) {
        rc = XAC_EFULL;
        goto undo;
    }
    if (e->xe_durable && xlog_append(e, c) != 0) {
        rc = XAC_EIO;
        goto undo;
    }
    ST(&ch(e)->ch_inprog, c);
    for (i = 0, k = 0; i < n && rc == 0; i++) {
        if (!written(e, t[i]))
            continue;
        f = fl[k++];
        e->xe_fr[f].fr_ts = c;
        e->xe_fr[f].fr_page = t[i];
        rc = xos_write_all(e->xe_poolfd,
                           e->xe_back + ((size_t)t[i] << e->xe_pshift),
                           e->xe_psize, (off_t)f << e->xe_pshift);
    }
    if (rc != 0) {
        if (e->xe_durable) {
            xlog_fail(e); /* logged but never published */
            rc = XAC_EIO;
        }
        k = nw;
        goto undo;
    }
    for (i = 0, k = 0; i < n; i++) {
        if (!written(e, t[i]))
            continue;
        f = fl[k++];
        pe = &e->xe_pt[t[i]];
        e->xe_fr[f].fr_next = pe->pe_head;
        e->xe_fr[f].fr_state = FR_CHAIN;
        ST(&pe->pe_head, f);
        ST(&pe->pe_newest, c);
        ring_push(e, t[i]);
    }
    free(fl);
    return 0;

undo:
    while (k > 0)
        free_put(e, fl[--k]);
    free(fl);
    ST(&ch(e)->ch_inprog, 0);
    return rc;
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
    struct xseg_hdr *h = e->xe_seg;

    return (e->xe_commits % XAC_GC_EVERY) == 0 ||
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
    if (xlog_append_stable(e, c) != 0)
        return XAC_EIO;
    if (commit_direct(e, c) != 0) {
        xlog_fail(e);
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
    uint64_t c;
    int rc;

    rc = xlog_prepare(e);
    if (rc != 0)
        return rc;
    mv_lock(e);
    if (LD(&h->ch_log_failed)) {
        mv_unlock(e);
        return XAC_EIO;
    }
    if (xmv_doomed(e) || xmv_stale(e)) {
        mv_unlock(e);
        e->xe_conflict = 1;
        return ABORTED;
    }
    c = h->ch_commits + 1;
    ST(&h->ch_direct, 1);
    if (xmv_alone(e) && !others_running(e)) {
        rc = commit_durable_alone(e, c);
        if (rc == 0) {
            ST(&h->ch_commits, c);
            e->xe_direct++;
            limbo_reclaim(e, UINT64_MAX); /* nobody runs */
        }
        ST(&h->ch_direct, 0);
        if ((++e->xe_commits & 255) == 0)
            xctl_reap(&e->xe_ctl);
        mv_unlock(e);
        if (rc == 0)
            e->xe_committed_at = c;
        return rc;
    }
    ST(&h->ch_direct, 0);
    rc = commit_pool(e, c, nw);
    if (rc == 0) {
        ST(&h->ch_commits, c);
        ST(&h->ch_inprog, 0);
        if (gc_due(e, nw))
            gc(e, 0);
    }
    if ((++e->xe_commits & 255) == 0)
        xctl_reap(&e->xe_ctl);
    mv_unlock(e);
    if (rc != 0)
        return rc;
    e->xe_committed_at = c;
    /* Published: a transaction that writes these pages now reads our
     * versions, and its record follows ours in the log, so it cannot be
     * stable before ours.  Holding the words through the sync would only
     * make writers of the same pages abort and retry until it ends. */
    release_owned(e);
    rc = xlog_wait(e, e->xe_logend);
    if (rc == 0 && e->xe_seg->sh_ring_tail != e->xe_seg->sh_ring_head &&
        !others_running(e)) {
        /* Our versions are stable now: copy them into the data file so
         * that later transactions read the file, not pool frames (when
         * others run, their commits collect them anyway). */
        mv_lock(e);
        gc(e, 2 * nw + 8);
        mv_unlock(e);
    }
    return rc;
}

int xmv_commit(struct xac_env *e)
{
    struct xctl_hdr *h = ch(e);
    size_t i, nw = 0;
    uint64_t c;
    int rc;

    e->xe_committed_at = 0;
    for (i = 0; i < e->xe_ntouched; i++)
        if (written(e, e->xe_touched[i]))
            nw++;
    if (nw == 0) /* serializes at its snapshot, like a query */
        return 0;
    if (e->xe_durable)
        return commit_durable(e, nw);
    mv_lock(e);
    if (xmv_doomed(e) || xmv_stale(e)) {
        mv_unlock(e);
        e->xe_conflict = 1;
        return ABORTED;
    }
    c = h->ch_commits + 1;
    ST(&h->ch_direct, 1);
    if (!others_running(e)) {
        rc = commit_direct(e, c);
        ST(&h->ch_commits, c);
        ST(&h->ch_direct, 0);
        e->xe_direct++;
        /* Nobody runs: every limbo frame is free. */
        limbo_reclaim(e, UINT64_MAX);
    } else {
        ST(&h->ch_direct, 0);
        rc = commit_pool(e, c, nw);
        if (rc == 0) {
            ST(&h->ch_commits, c);
            ST(&h->ch_inprog, 0);
            gc(e, 2 * nw + 8);
        }
    }
    if (rc == 0)
        e->xe_committed_at = c;
    if ((++e->xe_commits & 255) == 0)
        xctl_reap(&e->xe_ctl);
    mv_unlock(e);
    return rc;
}

/* Give up the writer words we hold (a word another transaction took
 * meanwhile stays its). */
static void release_owned(struct xac_env *e)
{
    uint64_t mine = OWNER(e->xe_txn, e->xe_ctl.cx_slot), w;
    size_t i;
    uint32_t pg;

    for (i = 0; i < e->xe_ntouched; i++) {
        pg = e->xe_touched[i];
        if (e->xe_pstate[pg] & XP_OWN) {
            w = mine;
            __atomic_compare_exchange_n(&e->xe_pt[pg].pe_owner, &w, 0, 0,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        }
    }
}

void xmv_end(struct xac_env *e)
{
    release_owned(e);
    ST(&myslot(e)->cs_txn, 0);
}

/* ---- policies -------------------------------------------------------- */

int xSetPolicy(int policy, unsigned backoff_us)
{
    if (!xac_env.xe_inited)
        return XAC_ENOTINIT;
    if (policy < XAC_POLICY_SELF_ABORT || policy > XAC_POLICY_POLITE)
        return XAC_EINVAL;
    if (xac_env.xe_depth > 0)
        return XAC_EINTXN;
    xac_env.xe_policy = policy;
    xac_env.xe_backoff_us = backoff_us;
    return 0;
}
