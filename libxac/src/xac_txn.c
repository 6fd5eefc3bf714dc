/* xac_txn.c: beginning and ending transactions, and the advisory
 * function.
 *
 * Commit validates and publishes the writeset (xac_commit.c: in place in the
 * file when no other transaction runs, else as new versions in the pool),
 * then revokes access with one mprotect(PROT_NONE) per run of touched
 * pages (one MADV_DONTNEED under page-table access, xac_wp.c).  Abort
 * does the same without publishing.  While the process is alone
 * (xSetKeepPages), pages stay readable instead: only written ones get an
 * mprotect, and the next xbegin revokes them all if another process
 * committed or attached meanwhile.  The working memory keeps its
 * contents (the next grant of a page copies a fresh snapshot version over
 * it), so pages are not freed and reallocated per transaction; past
 * XAC_WORKING_MIB of copied pages it is emptied once, which bounds what a
 * process holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "xac.h"
#include "xac_assert.h"
#include "xac_commit.h"
#include "xac_contend.h"
#include "xac_group.h"
#include "xac_int.h"
#include "xac_log.h"
#include "xac_os.h"
#include "xac_seg.h"
#include "xac_share.h"
#include "xac_wp.h"

/* Above this many runs, one mprotect over the whole span is cheaper. */
#define RUNS_MAX 64


static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void sort_touched(struct xac_env *e)
{
    struct xtxn *tx = &e->xe_tx;
    if (!tx->tx_tsorted)
        qsort(tx->tx_touched, tx->tx_ntouched, sizeof *tx->tx_touched,
              cmp_u32);
    tx->tx_tsorted = 1;
}

/* The next run of list t (sorted) from index *i on: consecutive pages for
 * which pick(state) holds, [*i, *j).  0 when there is none. */
static int next_run(const struct xac_env *e, const uint32_t *t, size_t n,
                    int (*pick)(uint8_t), size_t *i, size_t *j)
{
    while (*i < n && !pick(e->xe_tx.tx_pstate[t[*i]]))
        (*i)++;
    if (*i == n)
        return 0;
    for (*j = *i + 1; *j < n && t[*j] == t[*j - 1] + 1 &&
                      pick(e->xe_tx.tx_pstate[t[*j]]);
         (*j)++)
        ;
    return 1;
}

/* Not a PROT_ value: write-protect through userfaultfd (xac_wp.c). */
#define PROT_WP (-1)

/* Set protection prot on the pages of list t (sorted, n > 0) for which
 * pick(state) holds: one mprotect (or write protection) per run, or one
 * over the whole span when there are many runs and prot is PROT_NONE
 * (which only merges mappings).  Under page-table access (wp_pte) only
 * PROT_NONE (one MADV_DONTNEED per run: a span would also drop kept
 * pages in between) and PROT_WP can be set.  Returns 0 or -1. */
static int protect_runs(struct xac_env *e, const uint32_t *t, size_t n,
                        int (*pick)(uint8_t), int prot)
{
    size_t i, j, runs = 0;
    unsigned sh = e->xe_pshift;
    int rc;

    for (i = 0; next_run(e, t, n, pick, &i, &j); i = j)
        runs++;
    if (runs == 0)
        return 0;
    if (runs > RUNS_MAX && prot == PROT_NONE && !e->xe_wp.wp_pte)
        return xos.mprotect(e->xe_map.mp_base + ((size_t)t[0] << sh),
                            (size_t)(t[n - 1] - t[0] + 1) << sh, PROT_NONE);
    for (i = 0; next_run(e, t, n, pick, &i, &j); i = j) {
        if (prot == PROT_WP)
            rc = xwp_protect(&e->xe_wp, t[i], j - i, 1);
        else if (e->xe_wp.wp_pte && prot == PROT_NONE)
            rc = xwp_revoke(&e->xe_wp, t[i], j - i);
        else if (e->xe_wp.wp_pte)
            rc = -1; /* the mapping stays read-write */
        else
            rc = xos.mprotect(e->xe_map.mp_base + ((size_t)t[i] << sh),
                              (j - i) << sh, prot);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* The last resort: revoke the whole segment (always one mapping). */
static void revoke_all(struct xac_env *e)
{
    xsh_give_back_all(e);
    if (e->xe_wp.wp_pte)
        AZ(xwp_revoke(&e->xe_wp, 0, e->xe_map.mp_npages));
    else
        AZ(xos.mprotect(e->xe_map.mp_base, e->xe_map.mp_len, PROT_NONE));
}

static int any_page(uint8_t st)
{
    (void)st;
    return 1;
}

static int kept_page(uint8_t st)
{
    return (st & XP_KEPT) != 0;
}

static int written_page(uint8_t st)
{
    return (st & XP_LEVEL) == XP_WRITE;
}

/* Revoke every kept page. */
static void drop_kept(struct xac_env *e)
{
    struct xtxn *tx = &e->xe_tx;
    size_t i;

    if (tx->tx_nkept == 0)
        return;
    xsh_give_back_all(e);
    qsort(tx->tx_kept, tx->tx_nkept, sizeof *tx->tx_kept, cmp_u32);
    /* If the kernel refuses, the whole segment is one mapping (the
     * caller has no touched pages open). */
    if (protect_runs(e, tx->tx_kept, tx->tx_nkept, kept_page, PROT_NONE) != 0)
        revoke_all(e);
    for (i = 0; i < tx->tx_nkept; i++)
        tx->tx_pstate[tx->tx_kept[i]] &= (uint8_t)~(XP_KEPT | XP_LISTED);
    tx->tx_nkept = 0;
}

/* A kept page that a commit changed: no longer kept, and listed in
 * tx_touched (empty at xbegin) for revoke_changed. */
static void note_changed(void *arg, uint32_t pg)
{
    struct xtxn *tx = arg;

    if (!(tx->tx_pstate[pg] & XP_KEPT))
        return;
    tx->tx_pstate[pg] &= (uint8_t)~XP_KEPT;
    XASSERT(tx->tx_ntouched < tx->tx_tcap);
    tx->tx_touched[tx->tx_ntouched++] = pg;
}

/* At xbegin: kept pages hold the versions current at tx_kept_stamp;
 * revoke those that commits up to the new snapshot changed (the change
 * ring, xac_seg.h, names them), so that the others are what the snapshot
 * reads.  If the ring no longer reaches back, revoke them all. */
static void revoke_changed(struct xac_env *e)
{
    struct xtxn *tx = &e->xe_tx;
    size_t i, j;
    int rc = 0;

    XASSERT(tx->tx_ntouched == 0);
    if (xseg_changes(&e->xe_seg, tx->tx_kept_stamp, tx->tx_snap,
                     note_changed, tx) != 0) {
        for (i = 0; i < tx->tx_ntouched; i++)
            tx->tx_pstate[tx->tx_touched[i]] |= XP_KEPT;
        tx->tx_ntouched = 0;
        drop_kept(e);
        return;
    }
    qsort(tx->tx_touched, tx->tx_ntouched, sizeof *tx->tx_touched, cmp_u32);
    /* A changed page of the data file's mapping: the whole window goes
     * back to the working memory first (xac_share.c). */
    for (i = 0; i < tx->tx_ntouched && e->xe_map.mp_nshared > 0; i++)
        xsh_give_back(e, tx->tx_touched[i]);
    /* One revocation per run, never over a span: the kept pages between
     * runs stay. */
    for (i = 0; i < tx->tx_ntouched && rc == 0; i = j) {
        for (j = i + 1; j < tx->tx_ntouched &&
                        tx->tx_touched[j] == tx->tx_touched[j - 1] + 1;
             j++)
            ;
        if (e->xe_wp.wp_pte)
            rc = xwp_revoke(&e->xe_wp, tx->tx_touched[i], j - i);
        else
            rc = xos.mprotect(e->xe_map.mp_base +
                                  ((size_t)tx->tx_touched[i] << e->xe_pshift),
                              (j - i) << e->xe_pshift, PROT_NONE);
    }
    tx->tx_ntouched = 0;
    if (rc != 0) {
        /* If the kernel refuses, the whole segment is one mapping. */
        revoke_all(e);
        for (i = 0; i < tx->tx_nkept; i++)
            tx->tx_pstate[tx->tx_kept[i]] &= (uint8_t)~(XP_KEPT | XP_LISTED);
        tx->tx_nkept = 0;
    }
}

/* Forget which versions the working memory holds (xac_fault.c, load), and
 * which pages it has (mp_held, after mp_have in the same mapping). */
static void forget_contents(struct xac_env *e)
{
    /* Zero pages again, and no memory kept for them; a refusal costs a
     * pass over the table instead. */
    if (xos.madvise(e->xe_map.mp_have, xmap_have_bytes(&e->xe_map),
                    MADV_DONTNEED) != 0)
        memset(e->xe_map.mp_have, 0, xmap_have_bytes(&e->xe_map));
}

/* Empty the working memory once XAC_WORKING_MIB of copies went into it.
 * No page may be open or kept: their contents go. */
static void trim(struct xac_env *e)
{
    if (e->xe_map.mp_loaded < e->xe_map.mp_trim_pages)
        return;
    drop_kept(e);
    /* Best effort: if the hole cannot be punched, the memory stays.  The
     * contents go either way, as far as load() knows. */
    (void)xos.fallocate(e->xe_map.mp_memfd,
                        FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
                        (off_t)e->xe_map.mp_len);
    forget_contents(e);
    e->xe_map.mp_loaded = 0;
}

/* Revoke access to every touched page and forget them. */
static void release_pages(struct xac_env *e)
{
    struct xtxn *tx = &e->xe_tx;
    size_t i;

    if (tx->tx_ntouched > 0 &&
        protect_runs(e, tx->tx_touched, tx->tx_ntouched, any_page,
                     PROT_NONE) != 0) {
        revoke_all(e);
        for (i = 0; i < tx->tx_nkept; i++)
            tx->tx_pstate[tx->tx_kept[i]] &= (uint8_t)~XP_KEPT;
    }
    xcm_end(e);
    for (i = 0; i < tx->tx_ntouched; i++)
        tx->tx_pstate[tx->tx_touched[i]] &= XP_STICKY;
    tx->tx_ntouched = 0;
    tx->tx_tsorted = 1;
    drop_kept(e);
}

/* Keep the touched pages readable for the next transaction
 * (xSetKeepPages): written pages become read-only again if their
 * versions were published (ok), or are revoked (their contents are not
 * a committed version).  Read-only means write-protected (xac_wp.c)
 * where the segment has a userfaultfd, which leaves the mapping alone. */
static void keep_pages(struct xac_env *e, int ok)
{
    struct xtxn *tx = &e->xe_tx;
    uint32_t pg;
    size_t i;
    int wp = ok && e->xe_wp.wp_fd >= 0;

    if (wp && protect_runs(e, tx->tx_touched, tx->tx_ntouched, written_page,
                           PROT_WP) != 0)
        wp = 0; /* fall back to mprotect, below */
    if (!wp && protect_runs(e, tx->tx_touched, tx->tx_ntouched, written_page,
                            ok ? PROT_READ : PROT_NONE) != 0) {
        release_pages(e);
        return;
    }
    xcm_end(e);
    for (i = 0; i < tx->tx_ntouched; i++) {
        pg = tx->tx_touched[i];
        if (!ok && written_page(tx->tx_pstate[pg])) {
            tx->tx_pstate[pg] &= XP_STICKY;
            continue;
        }
        if (wp && written_page(tx->tx_pstate[pg]))
            tx->tx_pstate[pg] |= XP_WP;
        if (!(tx->tx_pstate[pg] & XP_LISTED)) {
            XASSERT(tx->tx_nkept < tx->tx_tcap); /* listed once each */
            tx->tx_kept[tx->tx_nkept++] = pg;
        }
        tx->tx_pstate[pg] = (uint8_t)(XP_KEPT | XP_LISTED |
                                     (tx->tx_pstate[pg] & XP_WP));
    }
    tx->tx_ntouched = 0;
    tx->tx_tsorted = 1;
    /* Kept pages hold the versions current at the snapshot, or at our
     * commit if it came right after it; otherwise another process
     * committed in between, and the next xbegin revokes what changed
     * after the snapshot (our own commit's pages too, needlessly). */
    if (tx->tx_committed_at == tx->tx_snap + 1)
        tx->tx_kept_stamp = tx->tx_committed_at;
    else
        tx->tx_kept_stamp = tx->tx_snap;
}

/* Our commit published the written pages as versions tx_committed_at:
 * the working memory holds those. */
static void name_written(struct xac_env *e)
{
    struct xtxn *tx = &e->xe_tx;
    size_t i;

    for (i = 0; i < tx->tx_ntouched; i++)
        if (written_page(tx->tx_pstate[tx->tx_touched[i]]))
            e->xe_map.mp_have[tx->tx_touched[i]] = tx->tx_committed_at + 1;
}

static int txn_finish(int commit)
{
    struct xac_env *e = &xac_env;
    struct xtxn *tx = &e->xe_tx;
    int rc = 0;

    sort_touched(e);
    tx->tx_committed_at = 0;
    if (commit)
        rc = xcm_commit(e);
    if (tx->tx_committed_at != 0)
        name_written(e);
    /* A transaction's pages hold versions of its snapshot (or of its own
     * commit) whoever else runs: kept, the next transaction revokes only
     * those commits changed. */
    if (tx->tx_keep)
        keep_pages(e, commit && rc == 0);
    else
        release_pages(e);
    trim(e);
    return rc;
}

static int txn_start(int query)
{
    struct xac_env *e = &xac_env;
    struct xtxn *tx = &e->xe_tx;
    int alone;

    if (!e->xe_inited)
        return XAC_ENOTINIT;
    if (e->xe_map.mp_base == NULL)
        return XAC_ENOTMAPPED;
    if (tx->tx_depth > 0) {
        if (tx->tx_qdepth != 0 && !query)
            return XAC_EQUERY;
        tx->tx_depth++;
        if (query && tx->tx_qdepth == 0)
            tx->tx_qdepth = tx->tx_depth;
        return 0;
    }
    if (!query && xlog_failed(&e->xe_log))
        return XAC_EIO;
    tx->tx_failed = 0;
    tx->tx_conflict = 0;
    xlog_forget_before(&e->xe_log);
    tx->tx_update = !query;
    /* An update's reads must fault and its writes go to the working
     * memory: no window of the data file stays mapped (xac_share.c). */
    if (!query)
        xsh_give_back_all(e);
    if (!query)
        xcn_enter(&e->xe_cn, &e->xe_ctl);
    xcm_begin(e);
    if (!query)
        xcn_began(&e->xe_cn, &e->xe_ctl, tx->tx_id);
    if (e->xe_log.lg_durable)
        xgrp_note_cpu(&e->xe_log); /* for a sibling choosing the leader */
    /* One look at the other slots serves both uses below.  A query keeps
     * its pages whether or not it is alone; it looks only to write-protect
     * what it reads (wp_now), which page-table access always does. */
    alone = (tx->tx_nkept > 0 || e->xe_wp.wp_fd >= 0) &&
            (!query || !e->xe_wp.wp_pte) && xcm_alone(e);
    e->xe_wp.wp_now = e->xe_wp.wp_fd >= 0 && tx->tx_keep && alone;
    /* Kept pages may be read without a fault, so an update transaction
     * cannot tell which of them it read: it validates them all as read
     * (xcm_stale).  Each one is a conflict it may not have had, so while
     * others are attached it keeps no more than XTX_KEEP_SHARED of them:
     * about the pages of the transaction before (a tree's path and leaf).
     * Unless nobody committed since they were kept: then the others
     * attached only read (queries), none of the pages changed, and
     * validation is free while the clock stands still (xcm_stale).
     * Then revoke the pages commits changed since. */
    if (tx->tx_nkept > XTX_KEEP_SHARED && !alone && !query &&
        tx->tx_snap != tx->tx_kept_stamp)
        drop_kept(e);
    else if (tx->tx_nkept > 0 && tx->tx_snap != tx->tx_kept_stamp)
        revoke_changed(e);
    tx->tx_qdepth = query ? 1 : 0;
    tx->tx_depth = 1;
    return 0;
}

static int txn_stop(int query)
{
    struct xac_env *e = &xac_env;
    struct xtxn *tx = &e->xe_tx;
    int in_query, commit, rc;

    if (tx->tx_depth == 0)
        return XAC_ENOTXN;
    in_query = tx->tx_qdepth != 0 && tx->tx_depth >= tx->tx_qdepth;
    if (in_query != query)
        return XAC_EQUERY;
    if (tx->tx_depth == tx->tx_qdepth)
        tx->tx_qdepth = 0;
    if (tx->tx_depth > 1) {
        tx->tx_depth--;
        if (tx->tx_update && !tx->tx_failed && xcm_doomed(e))
            tx->tx_failed = tx->tx_conflict = 1;
        return tx->tx_failed ? FAILED : PENDING;
    }
    if (tx->tx_update && !tx->tx_failed && xcm_doomed(e))
        tx->tx_failed = tx->tx_conflict = 1;
    commit = !tx->tx_failed && !query;
    rc = txn_finish(commit);
    tx->tx_depth = 0;
    if (tx->tx_update)
        xcn_end(&e->xe_cn, &e->xe_ctl, tx->tx_id, commit && rc == 0,
                (tx->tx_conflict && rc != XAC_EIO) || rc == ABORTED);
    if (rc == XAC_EIO)
        return rc;
    if (rc == ABORTED || rc == XAC_EFULL || (!commit && !query))
        return rc == XAC_EFULL ? rc : ABORTED;
    if (rc != 0)
        return rc;
    return COMMITTED;
}

int xbegin(void)
{
    return txn_start(0);
}

int xend(void)
{
    return txn_stop(0);
}

int xbeginQuery(void)
{
    return txn_start(1);
}

int xendQuery(void)
{
    return txn_stop(1);
}

int xFail(void)
{
    if (xac_env.xe_tx.tx_depth == 0)
        return XAC_ENOTXN;
    xac_env.xe_tx.tx_failed = 1;
    return 0;
}

int xValidate(void)
{
    struct xac_env *e = &xac_env;
    struct xtxn *tx = &e->xe_tx;

    if (tx->tx_depth == 0)
        return XAC_ENOTXN;
    if (tx->tx_update && !tx->tx_failed && (xcm_doomed(e) || xcm_stale(e)))
        tx->tx_failed = tx->tx_conflict = 1;
    return tx->tx_failed ? FAILED : PENDING;
}

int setPageAccess(void *addr, int mode)
{
    struct xac_env *e = &xac_env;
    struct xtxn *tx = &e->xe_tx;
    char *a = addr;
    uint32_t pg;
    int want;

    if (tx->tx_depth == 0)
        return XAC_ENOTXN;
    if (mode != READ && mode != READ_WRITE)
        return XAC_EINVAL;
    if (a < e->xe_map.mp_base || a >= e->xe_map.mp_base + e->xe_map.mp_len)
        return XAC_EBADADDR;
    want = mode == READ ? XP_READ : XP_WRITE;
    if (want == XP_WRITE && tx->tx_qdepth != 0)
        return XAC_EQUERY;
    pg = (uint32_t)((size_t)(a - e->xe_map.mp_base) >> e->xe_pshift);
    if ((tx->tx_pstate[pg] & XP_LEVEL) >= want)
        return 0;
    return xflt_grant(pg, want, 0);
}

int xSetKeepPages(int on)
{
    struct xac_env *e = &xac_env;
    struct xtxn *tx = &e->xe_tx;
    int was = tx->tx_keep;

    if (!e->xe_inited)
        return XAC_ENOTINIT;
    if (tx->tx_depth > 0)
        return XAC_EINTXN;
    tx->tx_keep = on != 0;
    if (!tx->tx_keep && e->xe_map.mp_base != NULL)
        drop_kept(e);
    if (tx->tx_keep && e->xe_map.mp_base != NULL && e->xe_wp.wp_fd < 0)
        xwp_open(&e->xe_wp, e->xe_map.mp_base, e->xe_map.mp_len, e->xe_psize,
                 e->xe_pshift, 1, 0); /* mapped while keeping was off */
    return was;
}

int xSetPolicy(int policy, unsigned backoff_us)
{
    struct xac_env *e = &xac_env;
    struct xtxn *tx = &e->xe_tx;

    if (!e->xe_inited)
        return XAC_ENOTINIT;
    if (policy < XAC_POLICY_SELF_ABORT || policy > XAC_POLICY_POLITE)
        return XAC_EINVAL;
    if (tx->tx_depth > 0)
        return XAC_EINTXN;
    tx->tx_policy = policy;
    e->xe_cn.cn_backoff_us = backoff_us;
    return 0;
}
