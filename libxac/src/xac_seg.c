/* xac_seg.c: the version store's files: attaching to "<dir>/xac.seg" and
 * "<dir>/xac.pool" (creating them as the first process), detaching,
 * and ch_lock with the repair of a store whose lock owner died
 * (xac_seg.h has the rules and the layout).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "xac.h"
#include "xac_assert.h"
#include "xac_atomic.h"
#include "xac_gc.h"
#include "xac_os.h"
#include "xac_seg.h"

static size_t rnd(size_t n, size_t ps)
{
    return (n + ps - 1) & ~(ps - 1);
}

void xseg_init(struct xseg *sg, struct xctl *cx, const char *dir,
               size_t psize, unsigned pshift, int durable)
{
    XASSERT(sg->sg_hdr == NULL);
    sg->sg_ctl = cx;
    sg->sg_dir = dir;
    sg->sg_psize = psize;
    sg->sg_pshift = pshift;
    sg->sg_durable = durable;
    sg->sg_datafd = -1;
    sg->sg_segfd = sg->sg_poolfd = -1;
    sg->sg_gc_walked = sg->sg_gc_skipped = 0; /* counts start at xInit */
}

/* ---- locking and repair ---------------------------------------------- */

/* A process died holding ch_lock.  Rebuild everything the lock guards
 * from the frame states and the chains: unlink versions of a commit that
 * never published, rebuild the free list, the limbo FIFO and the ring. */
static void repair(struct xseg *sg)
{
    struct xseg_hdr *h = sg->sg_hdr;
    uint64_t clock = LD(&xseg_ch(sg)->ch_commits);
    uint64_t stamp = LD(&xseg_ch(sg)->ch_next_txn);
    uint32_t f, g, n = h->sh_nframes;
    uint64_t pg;

    /* Versions newer than the clock belong to an unfinished commit; they
     * are at the heads of their chains. */
    for (f = 1; f < n; f++) {
        struct xfr *fr = &sg->sg_fr[f];
        if (fr->fr_state == FR_CHAIN && fr->fr_ts > clock) {
            struct xpe *pe = &sg->sg_pt[fr->fr_page];
            if (pe->pe_head == f) {
                ST(&pe->pe_head, fr->fr_next);
                ST(&pe->pe_newest, fr->fr_next != 0
                                       ? sg->sg_fr[fr->fr_next].fr_ts
                                       : pe->pe_ts);
            }
            fr->fr_state = FR_ALLOC;
        }
    }
    h->sh_free = 0;
    h->sh_used = n - 1; /* each frame put on the free list below leaves it */
    h->sh_limbo_head = h->sh_limbo_tail = 0;
    for (f = 1; f < n; f++) {
        struct xfr *fr = &sg->sg_fr[f];
        if (fr->fr_state == FR_CHAIN)
            continue;
        /* Readers may still be walking through an unlinked frame, so it
         * waits in limbo like any other. */
        if (fr->fr_state == FR_ALLOC || fr->fr_state == FR_LIMBO)
            xseg_limbo_put(sg, f, stamp);
        else
            xseg_free_put(sg, f);
    }
    for (pg = h->sh_ring_head; pg != h->sh_ring_tail; pg++)
        sg->sg_pt[sg->sg_ring[pg % (h->sh_npages + 1)]].pe_ring = 0;
    for (f = 1; f < n; f++)
        if (sg->sg_fr[f].fr_page < h->sh_npages)
            sg->sg_pt[sg->sg_fr[f].fr_page].pe_ring = 0;
    h->sh_ring_head = h->sh_ring_tail = 0;
    h->sh_gc_m = h->sh_gc_mark = 0;
    for (f = 1; f < n; f++) {
        g = sg->sg_fr[f].fr_page;
        if (sg->sg_fr[f].fr_state == FR_CHAIN && sg->sg_pt[g].pe_head == f)
            xseg_ring_push(sg, g);
    }
    xseg_ch(sg)->ch_inprog = 0;
}

void xseg_lock(struct xseg *sg)
{
    xctl_lock(sg->sg_ctl);
    if (xseg_ch(sg)->ch_repair && sg->sg_hdr != NULL) {
        repair(sg);
        xseg_ch(sg)->ch_repair = 0;
    }
    if (sg->sg_reap) {
        sg->sg_reap = 0;
        xctl_reap(sg->sg_ctl);
    }
}

void xseg_unlock(struct xseg *sg)
{
    xctl_unlock(sg->sg_ctl);
}

/* ---- the change ring ------------------------------------------------- */

/* Entries are appended under ch_lock in commit order, so stamps only grow
 * from one entry to the next (a commit undone by repair leaves entries
 * whose stamp the next commit reuses: extra pages, never missing ones).
 * Entry i can be overwritten once the head passes i + sh_chg_cap - 1:
 * an entry is trusted only if the head read after it is below that. */
int xseg_changes(const struct xseg *sg, uint64_t from, uint64_t to,
                 void (*fn)(void *arg, uint32_t pg), void *arg)
{
    const struct xseg_hdr *h = sg->sg_hdr;
    uint64_t head = LD(&h->sh_chg_head), i = head, stamp;
    uint64_t cap = h->sh_chg_cap;
    uint32_t pg;

    if (from >= to)
        return 0;
    while (i > 0) {
        const struct xchg *cg = &sg->sg_chg[--i % cap];
        stamp = LD(&cg->cg_stamp);
        pg = LD(&cg->cg_page);
        if (LD(&h->sh_chg_head) - i >= cap - 1)
            return -1;
        if (stamp <= from)
            return 0;
        if (stamp <= to && pg < sg->sg_npages)
            fn(arg, pg);
    }
    /* Every entry since the store was made: nothing older to miss. */
    return 0;
}

/* ---- the files ------------------------------------------------------- */

static int path_in(char *buf, size_t n, const char *dir, const char *name)
{
    return (size_t)snprintf(buf, n, "%s/%s", dir, name) >= n ? ENAMETOOLONG
                                                              : 0;
}

void xseg_unmap(struct xseg *sg)
{
    if (sg->sg_hdr != NULL)
        xos.munmap(sg->sg_hdr, sg->sg_len);
    if (sg->sg_segfd >= 0)
        xos.close(sg->sg_segfd);
    if (sg->sg_poolfd >= 0)
        xos.close(sg->sg_poolfd);
    free(sg->sg_buf);
    sg->sg_hdr = NULL;
    sg->sg_pt = NULL;
    sg->sg_fr = NULL;
    sg->sg_ring = NULL;
    sg->sg_chg = NULL;
    sg->sg_buf = NULL;
    sg->sg_segfd = sg->sg_poolfd = -1;
    sg->sg_len = 0;
    sg->sg_datafd = -1;
}

static int seg_map(struct xseg *sg, size_t len)
{
    struct xseg_hdr *h;

    h = xos.mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
                 sg->sg_segfd, 0);
    if (h == MAP_FAILED)
        return errno;
    sg->sg_hdr = h;
    sg->sg_len = len;
    sg->sg_pt = (struct xpe *)((char *)h + h->sh_pgoff);
    sg->sg_fr = (struct xfr *)((char *)h + h->sh_froff);
    sg->sg_ring = (uint32_t *)((char *)h + h->sh_ringoff);
    sg->sg_chg = (struct xchg *)((char *)h + h->sh_chgoff);
    return 0;
}

/* Is the existing segment file one we can read, of a format from oldest
 * to ours?  Its header in *h either way (zeroes if it could not be read). */
static int seg_valid(struct xseg *sg, const struct stat *sst,
                     uint32_t oldest, struct xseg_hdr *h)
{
    memset(h, 0, sizeof *h);
    if ((size_t)sst->st_size < sizeof *h ||
        xos_read_all(sg->sg_segfd, (char *)h, sizeof *h, 0, 0) != 0)
        return 0;
    return h->sh_magic == XSEG_MAGIC && h->sh_format >= oldest &&
           h->sh_format <= XSEG_FORMAT && h->sh_psize == sg->sg_psize &&
           h->sh_size == (uint64_t)sst->st_size;
}

/* The previous processes left versions in the pool (they died, or did
 * not xMunmap): write them into their data file before starting over. */
static void recover_old(struct xseg *sg, const struct stat *sst,
                        const struct stat *dst)
{
    struct xseg_hdr *h;
    int fd, rc;

    if (seg_map(sg, (size_t)sst->st_size) != 0)
        return;
    h = sg->sg_hdr;
    if (!h->sh_clean) {
        if (h->sh_dev == (uint64_t)dst->st_dev &&
            h->sh_ino == (uint64_t)dst->st_ino) {
            fd = sg->sg_datafd;
        } else {
            h->sh_path[XSEG_PATHMAX - 1] = '\0';
            fd = xos.open(h->sh_path, O_RDWR, 0);
        }
        if (fd >= 0) {
            rc = xgc_flush_all(sg, fd);
            if (rc == 0 && xos.fdatasync(fd) == 0)
                h->sh_clean = 1;
            if (fd != sg->sg_datafd)
                xos.close(fd);
        }
    }
    xos.munmap(sg->sg_hdr, sg->sg_len);
    sg->sg_hdr = NULL;
    sg->sg_len = 0;
}

static int seg_create(struct xseg *sg, const struct stat *dst)
{
    struct xseg_hdr h;
    size_t ps = sg->sg_psize;
    uint64_t np = sg->sg_npages, maxf;
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
    h.sh_chgoff = h.sh_ringoff + rnd((np + 1) * sizeof(uint32_t), ps);
    h.sh_chg_cap = 4 * np < XSEG_CHANGES_MIN   ? XSEG_CHANGES_MIN
                   : 4 * np > XSEG_CHANGES_MAX ? XSEG_CHANGES_MAX
                                               : 4 * np;
    h.sh_size = h.sh_chgoff + rnd(h.sh_chg_cap * sizeof(struct xchg), ps);
    h.sh_nframes = 1;
    abs = realpath(sg->sg_name, NULL);
    if (abs != NULL) {
        if (strlen(abs) < XSEG_PATHMAX)
            memcpy(h.sh_path, abs, strlen(abs) + 1);
        free(abs);
    }
    /* Truncating to 0 first zeroes every old entry. */
    if (xos.ftruncate(sg->sg_segfd, 0) != 0 ||
        xos.ftruncate(sg->sg_segfd, (off_t)h.sh_size) != 0 ||
        xos.ftruncate(sg->sg_poolfd, 0) != 0 ||
        xos.ftruncate(sg->sg_poolfd, (off_t)(maxf << sg->sg_pshift)) != 0)
        return errno;
    if (xos_write_all(sg->sg_segfd, (char *)&h, sizeof h, 0) != 0)
        return errno;
    h.sh_magic = XSEG_MAGIC;
    return xos_write_all(sg->sg_segfd, (char *)&h.sh_magic,
                         sizeof h.sh_magic, 0);
}

/* The most a drop asks to read back (reload): a bound on the time the
 * first write spends queueing reads, whatever the file's size. */
#define XSEG_RELOAD_MAX ((size_t)128 << 20)

/* Which pages of the data file's first len bytes are cached: vec[i] & 1
 * for OS page i, or NULL (nothing is read back then).  Through a mapping
 * made for the question alone: mincore faults nothing in. */
static unsigned char *cached_pages(struct xseg *sg, size_t len, size_t ops)
{
    unsigned char *vec = malloc(len / ops + 1);
    void *m;

    if (vec == NULL)
        return NULL;
    m = xos.mmap(NULL, len, PROT_READ, MAP_SHARED, sg->sg_datafd, 0);
    if (m == MAP_FAILED) {
        free(vec);
        return NULL;
    }
    if (xos.mincore(m, len, vec) != 0) {
        free(vec);
        vec = NULL;
    }
    (void)xos.munmap(m, len);
    return vec;
}

/* Ask for the runs of pages that vec says were cached to be read back,
 * at most XSEG_RELOAD_MAX in all: one POSIX_FADV_WILLNEED per run, which
 * queues the reads and returns.  The kernel reads what is asked without
 * readahead and caches it in small folios (the readahead of a fault, by
 * contrast, fills large folios and leaves its mark in them). */
static void reload(struct xseg *sg, const unsigned char *vec, size_t len,
                   size_t ops)
{
    size_t i = 0, j, n = len / ops, budget = XSEG_RELOAD_MAX, want;

    while (i < n && budget > 0) {
        if (!(vec[i] & 1)) {
            i++;
            continue;
        }
        for (j = i + 1; j < n && (vec[j] & 1) && (j - i) * ops < budget; j++)
            ;
        want = (j - i) * ops;
        if (xos.fadvise(sg->sg_datafd, (off_t)(i * ops), (off_t)want,
                        POSIX_FADV_WILLNEED) != 0)
            break; /* a hint: the pages come back on first use */
        budget -= want;
        i = j;
    }
}

/* Before the first write into the data file since the store was made:
 * let the kernel drop the file's clean cached pages (it writes the dirty
 * ones back first), then read back the ones it held.  Whoever touched the
 * file through a plain mmap() before (a program creating it, say) left
 * large folios read ahead around the fault and a readahead mark in them;
 * POSIX_FADV_RANDOM does not stop the mark from reading ahead again, in
 * more large folios, each time a load reaches it, and a 4 KiB pwrite of a
 * committed page into a large folio costs several times one into a small
 * one (docs/libxac-durability.md).  Read back by POSIX_FADV_WILLNEED, the
 * pages come in small folios, a run of them per request, while the
 * commit goes on; without the read-back each came back from the disk
 * alone at its first use, a random read each, and a store loaded before
 * its first writer paid for every page it had cached.  Pages mapped by a process (a query's window)
 * are not dropped.  Not at xMmap: a process that only reads would then
 * read the whole file from the disk again (64,000-key searches: 700,000
 * a second with the cache, 380,000 after the drop).  Best effort: a
 * hint. */
void xseg_drop_cache(struct xseg *sg)
{
    size_t ops = (size_t)xos.pagesize();
    size_t len = (size_t)sg->sg_npages << sg->sg_pshift;
    unsigned char *vec;

    if (sg->sg_hdr->sh_dropped)
        return;
    sg->sg_hdr->sh_dropped = 1;
    len -= len % ops;
    vec = len > 0 ? cached_pages(sg, len, ops) : NULL;
    (void)xos.fadvise(sg->sg_datafd, 0, 0, POSIX_FADV_DONTNEED);
    if (vec != NULL)
        reload(sg, vec, len, ops);
    free(vec);
}

/* ---- attach and detach ----------------------------------------------- */

int xseg_attach_begin(struct xseg *sg, int datafd, const char *name,
                      uint32_t npages, int *others)
{
    char path[4096];
    struct stat sst;
    int rc;

    XASSERT(sg->sg_hdr == NULL && sg->sg_ctl != NULL);
    sg->sg_datafd = datafd;
    sg->sg_name = name;
    sg->sg_npages = npages;
    sg->sg_segfd = sg->sg_poolfd = -1;
    sg->sg_buf = malloc(sg->sg_psize);
    if (sg->sg_buf == NULL)
        return ENOMEM;
    if (xos.flock(sg->sg_ctl->cx_fd, LOCK_EX) != 0) {
        rc = errno;
        xseg_unmap(sg);
        return rc;
    }
    rc = path_in(path, sizeof path, sg->sg_dir, XSEG_NAME);
    if (rc != 0)
        goto fail;
    sg->sg_segfd = xos.open(path, O_RDWR | O_CREAT, 0666);
    rc = path_in(path, sizeof path, sg->sg_dir, XPOOL_NAME);
    if (rc != 0)
        goto fail;
    sg->sg_poolfd = xos.open(path, O_RDWR | O_CREAT, 0666);
    if (sg->sg_segfd < 0 || sg->sg_poolfd < 0 ||
        xos.fstat(sg->sg_segfd, &sst) != 0) {
        rc = errno;
        goto fail;
    }
    xseg_lock(sg);
    *others = xctl_other_mapped(sg->sg_ctl);
    xseg_unlock(sg);
    return 0;

fail:
    xseg_attach_fail(sg);
    return rc;
}

void xseg_attach_fail(struct xseg *sg)
{
    xos.flock(sg->sg_ctl->cx_fd, LOCK_UN);
    xseg_unmap(sg);
}

/* Join the store of the processes that have the file mapped. */
static int join(struct xseg *sg, const struct stat *sst,
                const struct stat *dst)
{
    struct xseg_hdr h;
    int rc;

    if (!seg_valid(sg, sst, XSEG_FORMAT, &h))
        return XAC_EBADCTL;
    rc = seg_map(sg, (size_t)sst->st_size);
    if (rc != 0)
        return rc;
    if (sg->sg_hdr->sh_dev != (uint64_t)dst->st_dev ||
        sg->sg_hdr->sh_ino != (uint64_t)dst->st_ino ||
        sg->sg_hdr->sh_npages != sg->sg_npages)
        return EBUSY;
    return 0;
}

/* Did the processes before drop the data file's cache (sh_dropped), and
 * has nothing written to the file, or changed it any other way, since
 * the last of them left (the ctime it noted)?  Then the cache holds what
 * libxac wrote with pwrite(2) and read with pread(2), small folios, and a
 * new drop would only throw it away: every page a loaded store had
 * cached coming back from the disk at the next session's first write (a
 * lone writer into a loaded 16,000-key B+-tree: about a third of its
 * rate).  A program that only read the file meanwhile through a plain
 * mmap() leaves its ctime alone, and may leave large folios that the
 * session then writes into more slowly: a cost in speed, never in
 * correctness.  h: the old header, read before recover_old, which may
 * write to the file. */
static int drop_still_holds(const struct xseg_hdr *h, int valid,
                            const struct stat *dst)
{
    return valid && h->sh_format == XSEG_FORMAT && h->sh_dropped &&
           h->sh_dev == (uint64_t)dst->st_dev &&
           h->sh_ino == (uint64_t)dst->st_ino &&
           (h->sh_left_ctime_sec != 0 || h->sh_left_ctime_nsec != 0) &&
           h->sh_left_ctime_sec == (int64_t)dst->st_ctim.tv_sec &&
           h->sh_left_ctime_nsec == (int64_t)dst->st_ctim.tv_nsec;
}

/* As the first process: a new store. */
static int create(struct xseg *sg, struct stat *sst, const struct stat *dst)
{
    struct xseg_hdr old;
    int rc, valid = seg_valid(sg, sst, XSEG_FORMAT_RECOVER, &old);
    int dropped = drop_still_holds(&old, valid, dst);

    if (!sg->sg_durable && valid)
        recover_old(sg, sst, dst);
    rc = seg_create(sg, dst);
    if (rc != 0)
        return rc;
    if (xos.fstat(sg->sg_segfd, sst) != 0)
        return errno;
    rc = seg_map(sg, (size_t)sst->st_size);
    if (rc != 0)
        return rc;
    xseg_lock(sg);
    xseg_ch(sg)->ch_repair = 0;
    xseg_ch(sg)->ch_inprog = 0;
    sg->sg_hdr->sh_dropped = (uint32_t)dropped;
    xseg_unlock(sg);
    return 0;
}

int xseg_attach_end(struct xseg *sg, int others)
{
    struct xctl *cx = sg->sg_ctl;
    struct stat sst, dst;
    int rc;

    if (xos.fstat(sg->sg_datafd, &dst) != 0 ||
        xos.fstat(sg->sg_segfd, &sst) != 0)
        rc = errno;
    else
        rc = others > 0 ? join(sg, &sst, &dst) : create(sg, &sst, &dst);
    if (rc != 0) {
        xseg_attach_fail(sg);
        return rc;
    }
    ST(&xctl_slots(cx)[cx->cx_slot].cs_mapped, 1);
    AZ(xos.flock(cx->cx_fd, LOCK_UN));
    return 0;
}

/* The last process leaves, every version written back: note the data
 * file's ctime for the next first process (drop_still_holds). */
static void note_left(struct xseg *sg)
{
    struct stat st;

    if (xos.fstat(sg->sg_datafd, &st) != 0)
        return; /* then the next session drops the cache again */
    sg->sg_hdr->sh_left_ctime_sec = (int64_t)st.st_ctim.tv_sec;
    sg->sg_hdr->sh_left_ctime_nsec = (int64_t)st.st_ctim.tv_nsec;
}

int xseg_leave(struct xseg *sg, int *last, int *failed, uint64_t *lim)
{
    struct xctl *cx = sg->sg_ctl;
    int rc = 0;

    *lim = 0;
    xseg_lock(sg);
    *last = !xctl_other_mapped(cx);
    ST(&xctl_slots(cx)[cx->cx_slot].cs_mapped, 0);
    *failed = sg->sg_durable && LD(&xseg_ch(sg)->ch_log_failed);
    if (*last && !*failed) {
        *lim = xgc_limit(sg, LD(&xseg_ch(sg)->ch_commits));
        rc = xgc_flush_all(sg, sg->sg_datafd);
        if (rc == 0 && !sg->sg_durable)
            sg->sg_hdr->sh_clean = 1;
        if (rc == 0)
            note_left(sg);
    }
    xseg_unlock(sg);
    return rc;
}
