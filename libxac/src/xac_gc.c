/* xac_gc.c: garbage collection of the version store (xac_gc.h; the
 * store's rules are in xac_seg.h).
 *
 * Every commit that wrote versions into the pool collects a few pages of
 * the ring (pages that have pool versions, oldest first): for each, the
 * newest version that every running snapshot reads (or reads past) goes
 * into the data file, and it and every older frame go to limbo.  A limbo
 * frame is freed once every transaction that began before it left its
 * chain has ended: only those may still be reading it.
 */
#include <stdint.h>

#include "xac_assert.h"
#include "xac_atomic.h"
#include "xac_gc.h"
#include "xac_os.h"
#include "xac_seg.h"

/* Copy frame f into page pg of the data file datafd. */
static int frame_to_data(struct xseg *sg, int datafd, uint32_t f,
                         uint64_t pg)
{
    int rc = xos_read_all(sg->sg_poolfd, sg->sg_buf, sg->sg_psize,
                          (off_t)f << sg->sg_pshift, 0);
    if (datafd == sg->sg_datafd)
        xseg_drop_cache(sg);
    if (rc == 0)
        rc = xos_write_all(datafd, sg->sg_buf, sg->sg_psize,
                           (off_t)pg << sg->sg_pshift);
    return rc;
}

/* Oldest snapshot and oldest transaction id among the other running
 * transactions (ours is ending when we collect). */
static void oldest(struct xseg *sg, uint64_t *snap, uint64_t *id)
{
    struct xctl_slot *s = xctl_slots(sg->sg_ctl);
    uint32_t i, hwm = LD(&xseg_ch(sg)->ch_slot_hwm);
    uint64_t t;

    *snap = LD(&xseg_ch(sg)->ch_commits);
    *id = UINT64_MAX;
    for (i = 0; i < hwm; i++) {
        if (i == sg->sg_ctl->cx_slot)
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
static int writeback(struct xseg *sg, int datafd, uint32_t pg, uint64_t m)
{
    struct xpe *pe = &sg->sg_pt[pg];
    uint32_t f = pe->pe_head, prev = 0, g, next;
    uint64_t stamp;
    int rc;

    while (f != 0 && sg->sg_fr[f].fr_ts > m) {
        prev = f;
        f = sg->sg_fr[f].fr_next;
        sg->sg_gc_walked++;
    }
    if (f == 0)
        return 0;
    rc = frame_to_data(sg, datafd, f, pg);
    if (rc != 0)
        return rc;
    /* Data first, then the stamp, then the cut: a reader that no longer
     * finds the frame finds its contents in the data file. */
    ST(&pe->pe_ts, sg->sg_fr[f].fr_ts);
    if (prev != 0)
        ST(&sg->sg_fr[prev].fr_next, 0);
    else
        ST(&pe->pe_head, 0);
    stamp = LD(&xseg_ch(sg)->ch_next_txn);
    for (g = f; g != 0; g = next) {
        next = sg->sg_fr[g].fr_next;
        xseg_limbo_put(sg, g, stamp);
    }
    return 0;
}

void xgc_reclaim(struct xseg *sg, uint64_t minid)
{
    struct xseg_hdr *h = sg->sg_hdr;
    uint32_t f;

    while ((f = h->sh_limbo_head) != 0 && sg->sg_fr[f].fr_stamp <= minid) {
        XASSERT(sg->sg_fr[f].fr_state == FR_LIMBO);
        h->sh_limbo_head = sg->sg_fr[f].fr_lnext;
        if (h->sh_limbo_head == 0)
            h->sh_limbo_tail = 0;
        xseg_free_put(sg, f);
    }
}

uint64_t xgc_limit(const struct xseg *sg, uint64_t m)
{
    uint64_t d;

    if (!sg->sg_durable)
        return m;
    d = LD(&xseg_ch(sg)->ch_log_dstamp);
    return d < m ? d : m;
}

/* Has every page now in the ring been collected for m already?  Then
 * each holds only versions newer than m, and walking its chain again
 * finds nothing to copy.  The note (m, and the ring's tail when the
 * first collection for m began) holds only while every collection since
 * computed the same m; any other m replaces it.  Every commit after that
 * first collection has a stamp above the clock then, which is >= m.  So
 * a page pushed onto the ring after the noted tail either came back from
 * a collection for m, with everything up to m cut off its chain, or had
 * no versions before a commit newer than m; and once the ring's head has
 * passed the noted tail, no page before it is left.  Without this, a
 * process descheduled inside a transaction (more processes than CPUs)
 * holds m still for its other processes' whole time slices while the
 * pool stays above the bound that makes every commit collect: each of
 * those commits walked its 2w + 8 pages' chains to the end under
 * ch_lock, chains growing by a version a commit (test A of
 * concurrency_test at 16 processes: 8 % of the CPU in that walk). */
static int nothing_older(struct xseg_hdr *h, uint64_t m)
{
    if (h->sh_gc_m != m + 1) {
        h->sh_gc_m = m + 1;
        h->sh_gc_mark = h->sh_ring_tail;
        return 0;
    }
    return h->sh_ring_head >= h->sh_gc_mark;
}

int xgc_collect(struct xseg *sg, uint64_t budget)
{
    struct xseg_hdr *h = sg->sg_hdr;
    uint64_t cap = h->sh_npages + 1, m, minid, k, n;
    uint32_t pg;
    int rc = 0;

    oldest(sg, &m, &minid);
    m = xgc_limit(sg, m);
    n = h->sh_ring_tail - h->sh_ring_head;
    if (budget == 0 || budget > n)
        budget = n;
    if (budget > 0 && nothing_older(h, m)) {
        budget = 0;
        sg->sg_gc_skipped++;
    }
    for (k = 0; k < budget && rc == 0; k++) {
        pg = sg->sg_ring[h->sh_ring_head % cap];
        h->sh_ring_head++;
        sg->sg_pt[pg].pe_ring = 0;
        rc = writeback(sg, sg->sg_datafd, pg, m);
        if (sg->sg_pt[pg].pe_head != 0)
            xseg_ring_push(sg, pg);
    }
    oldest(sg, &m, &minid);
    xgc_reclaim(sg, minid);
    return rc;
}

int xgc_flush_all(struct xseg *sg, int datafd)
{
    struct xseg_hdr *h = sg->sg_hdr;
    uint64_t clock = xgc_limit(sg, LD(&xseg_ch(sg)->ch_commits));
    uint32_t f, n = h->sh_nframes;
    int rc = 0, r;

    for (f = 1; f < n; f++) {
        struct xfr *fr = &sg->sg_fr[f];
        if (fr->fr_state == FR_CHAIN && fr->fr_page < h->sh_npages &&
            sg->sg_pt[fr->fr_page].pe_head == f) {
            r = writeback(sg, datafd, fr->fr_page, clock);
            if (rc == 0)
                rc = r;
        }
    }
    return rc;
}

int xgc_checkpoint(struct xseg *sg, uint64_t *m)
{
    uint64_t minid;
    int rc;

    xseg_lock(sg);
    oldest(sg, m, &minid);
    *m = xgc_limit(sg, *m);
    rc = xgc_collect(sg, 0);
    xseg_unlock(sg);
    return rc;
}
