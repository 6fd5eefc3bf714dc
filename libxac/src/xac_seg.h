/* xac_seg.h: the version store, shared by every process that maps the
 * file: the segment file "<dir>/xac.seg" and the version pool
 * "<dir>/xac.pool".  xac_seg.c attaches, detaches, repairs and locks it;
 * xac_gc.c collects it.  docs/libxac.md describes the design and
 * docs/libxac-serializability.md argues that it is serializable.
 *
 * - The data file holds one version of each page (stamp pe_ts); newer
 *   versions live in the pool, one page frame each, linked newest first
 *   from the page table entry (pe_head).  A transaction with snapshot s
 *   reads, for each page, the newest version whose stamp is <= s.
 * - Versions are immutable while a transaction may still map them: a
 *   commit never overwrites the data file while another transaction runs
 *   (then it writes new versions into the pool), and the garbage
 *   collector copies a version into the data file only when every running
 *   snapshot reads that version or a newer one.  Frames leaving a chain
 *   wait in "limbo" until every transaction that may have mapped them has
 *   ended.
 * - DURABLE: the store obeys the WAL rule (only versions whose log records
 *   are stable go into the data file) through two fields the log
 *   publishes in the control file, ch_log_dstamp and ch_log_failed.  It
 *   never calls the log; the commit protocol (xac_commit.c) calls both.
 *
 * Shared layout of "xac.seg" (format 3): struct xseg_hdr, page table (one
 * struct xpe per page), frame table (struct xfr per frame), ring of pages
 * that have pool versions (GC order), and the change ring: the last
 * sh_chg_cap (page, stamp) pairs that commits published, in commit
 * order, so that a process whose pages hold the versions current at one
 * stamp can find the ones a later snapshot no longer reads (kept pages,
 * xac_txn.c) without looking at each.  It is mapped MAP_SHARED and is
 * sparse: only entries that are used take disk blocks.  ch_lock (in
 * xac.ctl) guards everything but pe_owner (compare-and-swap) and the cs_
 * fields a process sets for itself.  Readers walk chains without the lock.
 */
#ifndef XAC_SEG_H
#define XAC_SEG_H

#include <stddef.h>
#include <stdint.h>

#include "xac_assert.h"
#include "xac_atomic.h"
#include "xac_ctl.h"

#define XSEG_MAGIC 0x47455358u /* "XSEG" in a little-endian dump */
#define XSEG_FORMAT 3u
/* The oldest format whose versions a first process still writes back into
 * their data file: format 3 only gave format 2's padding a meaning. */
#define XSEG_FORMAT_RECOVER 2u
/* Entries of the change ring: 4 per page of the segment, at least
 * XSEG_CHANGES_MIN and at most XSEG_CHANGES_MAX (1 MiB).  A process
 * whose kept pages are older than the ring reaches revokes them all,
 * which for a small segment costs little more than the ring. */
#define XSEG_CHANGES_MIN 1024u
#define XSEG_CHANGES_MAX 65536u
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
    uint64_t sh_chgoff;     /* offset of the change ring (format 2) */
    uint64_t sh_chg_cap;    /* its entries */
    uint64_t sh_chg_head;   /* entries appended to it so far; entry i is
                             * at i % sh_chg_cap */
    uint32_t sh_dropped;    /* the data file's cache was dropped before
                             * the first write into it (xseg_drop_cache) */
    uint32_t sh_used;       /* frames not on the free list: in a chain, in
                             * limbo or allocated (format 3) */
    char sh_path[XSEG_PATHMAX]; /* data file, for recovery by the next
                                 * first process */
    /* The data file's ctime when the last process left after writing
     * every version back, 0 if none did: the next first process keeps
     * sh_dropped if the file's ctime is still this (xac_seg.c, create).
     * After sh_path, inside the header's page, so a segment file of
     * format 3 written without them reads as 0 here. */
    int64_t sh_left_ctime_sec;
    int64_t sh_left_ctime_nsec;
    /* The collector's note (xac_gc.c, xgc_collect): 1 + the oldest
     * snapshot m it collected for, 0 if none yet, and the ring's tail
     * when it first collected for that m.  Session state, 0 in a new
     * store and after a repair. */
    uint64_t sh_gc_m;
    uint64_t sh_gc_mark;
};

/* An entry of the change ring: commit stamp cg_stamp published a version
 * of page cg_page. */
struct xchg {
    uint64_t cg_stamp;
    uint32_t cg_page;
    uint32_t cg_pad;
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

/* A process's view of the store. */
struct xseg {
    /* Set by xseg_init (xInit) and xseg_attach_begin (xMmap). */
    struct xctl *sg_ctl;      /* the control file (ch_lock, slots) */
    const char *sg_dir;       /* the xInit directory */
    size_t sg_psize;
    unsigned sg_pshift;
    int sg_durable;           /* the WAL rule applies */
    int sg_datafd;            /* the data file (the mapping's) */
    const char *sg_name;      /* its name as given to xMmap */
    uint32_t sg_npages;
    /* The store. */
    int sg_segfd;             /* <dir>/xac.seg */
    int sg_poolfd;            /* <dir>/xac.pool */
    struct xseg_hdr *sg_hdr;  /* MAP_SHARED mapping of xac.seg, or NULL */
    size_t sg_len;
    struct xpe *sg_pt;        /* page table, one entry per page */
    struct xfr *sg_fr;        /* frame table, one entry per pool frame */
    uint32_t *sg_ring;        /* pages that have pool versions (FIFO) */
    struct xchg *sg_chg;      /* the change ring */
    char *sg_buf;             /* one page, for copying versions */
    unsigned sg_reap;         /* a dead process was seen: reap slots at the
                               * next xseg_lock */
    /* This process's collections (xStats): */
    uint64_t sg_gc_walked;    /* versions passed over in chains, looking
                               * for the one to copy into the data file */
    uint64_t sg_gc_skipped;   /* collections that walked no chain: every
                               * page in the ring had been collected for
                               * the same oldest snapshot */
};

void xseg_init(struct xseg *sg, struct xctl *cx, const char *dir,
               size_t psize, unsigned pshift, int durable);

/* Attaching is three steps, so that DURABLE recovery (which the store
 * does not do) runs between them under the same flock: xseg_attach_begin
 * takes the control file's flock, opens xac.seg and xac.pool for data
 * file datafd (named name, of npages pages) and counts the other
 * processes that have it mapped (*others); 0, or an errno value with
 * nothing held.  xseg_attach_end joins their store (others > 0: the same
 * file and length, else EBUSY; a store it cannot read, XAC_EBADCTL) or
 * makes a new one (first: NONDURABLE, versions a dead process left in
 * the pool go into their file first), marks us mapped and releases the
 * flock; 0 or an error, after which nothing is held.  xseg_attach_fail
 * gives up between the two. */
int xseg_attach_begin(struct xseg *sg, int datafd, const char *name,
                      uint32_t npages, int *others);
int xseg_attach_end(struct xseg *sg, int others);
void xseg_attach_fail(struct xseg *sg);
/* Detach, the caller holding the control file's flock: unmark us; if no
 * other process has the file mapped (*last) and the log has not failed
 * (*failed), write every version back into the data file (*lim: the
 * stamp up to which it holds every commit).  0 or the errno value of a
 * failed write.  The store stays mapped: xseg_unmap releases it. */
int xseg_leave(struct xseg *sg, int *last, int *failed, uint64_t *lim);
/* Call fn(arg, pg) for every page that a commit with stamp in (from, to]
 * published a version of (possibly more than once, and possibly for a
 * few pages of later stamps), without ch_lock.  0, or -1 if the change
 * ring no longer reaches back to from: then the caller must assume every
 * page changed.  to must be a stamp the caller read from the commit
 * clock before calling.  Async-signal-safe. */
int xseg_changes(const struct xseg *sg, uint64_t from, uint64_t to,
                 void (*fn)(void *arg, uint32_t pg), void *arg);
/* Unmap and close the store (no shared state changes). */
void xseg_unmap(struct xseg *sg);
/* Take ch_lock; repair the store if its last owner died holding it, and
 * reap dead processes' slots if sg_reap asks for it. */
void xseg_lock(struct xseg *sg);
void xseg_unlock(struct xseg *sg);

static inline struct xctl_hdr *xseg_ch(const struct xseg *sg)
{
    return sg->sg_ctl->cx_hdr;
}

/* The pool frame holding the version of pg that snapshot snap reads, or 0
 * for the data file.  Async-signal-safe. */
static inline uint32_t xseg_find(const struct xseg *sg, uint32_t pg,
                                 uint64_t snap)
{
    uint32_t f = LD(&sg->sg_pt[pg].pe_head);

    while (f != 0 && LD(&sg->sg_fr[f].fr_ts) > snap)
        f = LD(&sg->sg_fr[f].fr_next);
    return f;
}

/* Newest committed stamp of page pg.  Async-signal-safe. */
static inline uint64_t xseg_newest(const struct xseg *sg, uint32_t pg)
{
    return LD(&sg->sg_pt[pg].pe_newest);
}

/* The operations below change what ch_lock guards: call with it held. */

/* Frame f leaves its chain: it waits in limbo until every transaction
 * that began before stamp (ch_next_txn now) has ended. */
static inline void xseg_limbo_put(struct xseg *sg, uint32_t f, uint64_t stamp)
{
    struct xseg_hdr *h = sg->sg_hdr;
    struct xfr *fr = &sg->sg_fr[f];

    fr->fr_state = FR_LIMBO;
    fr->fr_stamp = stamp;
    fr->fr_lnext = 0;
    if (h->sh_limbo_tail != 0)
        sg->sg_fr[h->sh_limbo_tail].fr_lnext = f;
    else
        h->sh_limbo_head = f;
    h->sh_limbo_tail = f;
}

static inline void xseg_free_put(struct xseg *sg, uint32_t f)
{
    sg->sg_fr[f].fr_state = FR_FREE;
    sg->sg_fr[f].fr_lnext = sg->sg_hdr->sh_free;
    sg->sg_hdr->sh_free = f;
    if (sg->sg_hdr->sh_used > 0) /* a count that is off only moves GC */
        sg->sg_hdr->sh_used--;
}

/* Page pg has pool versions: queue it for the collector (once). */
static inline void xseg_ring_push(struct xseg *sg, uint32_t pg)
{
    struct xseg_hdr *h = sg->sg_hdr;
    uint64_t cap = h->sh_npages + 1;

    if (sg->sg_pt[pg].pe_ring)
        return;
    XASSERT(h->sh_ring_tail - h->sh_ring_head < cap);
    sg->sg_ring[h->sh_ring_tail % cap] = pg;
    sg->sg_pt[pg].pe_ring = 1;
    h->sh_ring_tail++;
}

/* A commit with stamp c publishes a version of pg: note it in the change
 * ring, before the clock says c (readers trust entries below the head
 * they read after the clock). */
static inline void xseg_note_change(struct xseg *sg, uint32_t pg, uint64_t c)
{
    struct xseg_hdr *h = sg->sg_hdr;
    struct xchg *cg = &sg->sg_chg[h->sh_chg_head % h->sh_chg_cap];

    ST(&cg->cg_page, pg);
    ST(&cg->cg_stamp, c);
    ST(&h->sh_chg_head, h->sh_chg_head + 1);
}

/* Before a write into the data file, under ch_lock: the first since the
 * store was made drops the file's cached pages (xac_seg.c says why). */
void xseg_drop_cache(struct xseg *sg);

/* A free frame, or 0 if the pool is full. */
static inline uint32_t xseg_frame_alloc(struct xseg *sg)
{
    struct xseg_hdr *h = sg->sg_hdr;
    uint32_t f = h->sh_free;

    if (f != 0) {
        XASSERT(sg->sg_fr[f].fr_state == FR_FREE);
        sg->sg_fr[f].fr_state = FR_ALLOC;
        h->sh_free = sg->sg_fr[f].fr_lnext;
        h->sh_used++;
        return f;
    }
    if (h->sh_nframes < h->sh_maxframes) {
        f = h->sh_nframes;
        sg->sg_fr[f].fr_state = FR_ALLOC;
        h->sh_nframes = f + 1;
        h->sh_used++;
        return f;
    }
    return 0;
}

#endif
