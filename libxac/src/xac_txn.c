/* xac_txn.c: beginning and ending transactions, and the advisory
 * function.
 *
 * Commit validates and publishes the writeset (xac_mvcc.c: in place in the
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
#include <time.h>

#include "xac.h"
#include "xac_assert.h"
#include "xac_int.h"
#include "xac_os.h"

/* Above this many runs, one mprotect over the whole span is cheaper. */
#define RUNS_MAX 64


static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void sort_touched(struct xac_env *e)
{
    if (!e->xe_tsorted)
        qsort(e->xe_touched, e->xe_ntouched, sizeof *e->xe_touched, cmp_u32);
    e->xe_tsorted = 1;
}

/* The next run of list t (sorted) from index *i on: consecutive pages for
 * which pick(state) holds, [*i, *j).  0 when there is none. */
static int next_run(const struct xac_env *e, const uint32_t *t, size_t n,
                    int (*pick)(uint8_t), size_t *i, size_t *j)
{
    while (*i < n && !pick(e->xe_pstate[t[*i]]))
        (*i)++;
    if (*i == n)
        return 0;
    for (*j = *i + 1; *j < n && t[*j] == t[*j - 1] + 1 &&
                      pick(e->xe_pstate[t[*j]]);
         (*j)++)
        ;
    return 1;
}

/* Not a PROT_ value: write-protect through userfaultfd (xac_wp.c). */
#define PROT_WP (-1)

/* Set protection prot on the pages of list t (sorted, n > 0) for which
 * pick(state) holds: one mprotect (or write protection) per run, or one
 * over the whole span when there are many runs and prot is PROT_NONE
 * (which only merges mappings).  Under page-table access (xe_pte) only
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
    if (runs > RUNS_MAX && prot == PROT_NONE && !e->xe_pte)
        return xos.mprotect(e->xe_base + ((size_t)t[0] << sh),
                            (size_t)(t[n - 1] - t[0] + 1) << sh, PROT_NONE);
    for (i = 0; next_run(e, t, n, pick, &i, &j); i = j) {
        if (prot == PROT_WP)
            rc = xwp_protect(e, t[i], j - i, 1);
        else if (e->xe_pte && prot == PROT_NONE)
            rc = xwp_revoke(e, t[i], j - i);
        else if (e->xe_pte)
            rc = -1; /* the mapping stays read-write */
        else
            rc = xos.mprotect(e->xe_base + ((size_t)t[i] << sh),
                              (j - i) << sh, prot);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* The last resort: revoke the whole segment (always one mapping). */
static void revoke_all(struct xac_env *e)
{
    if (e->xe_pte)
        AZ(xwp_revoke(e, 0, e->xe_npages));
    else
        AZ(xos.mprotect(e->xe_base, e->xe_len, PROT_NONE));
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
    size_t i;

    if (e->xe_nkept == 0)
        return;
    qsort(e->xe_kept, e->xe_nkept, sizeof *e->xe_kept, cmp_u32);
    /* If the kernel refuses, the whole segment is one mapping (the
     * caller has no touched pages open). */
    if (protect_runs(e, e->xe_kept, e->xe_nkept, kept_page, PROT_NONE) != 0)
        revoke_all(e);
    for (i = 0; i < e->xe_nkept; i++)
        e->xe_pstate[e->xe_kept[i]] &= (uint8_t)~(XP_KEPT | XP_LISTED);
    e->xe_nkept = 0;
}

/* Forget which versions the working memory holds (xac_fault.c, load). */
static void forget_contents(struct xac_env *e)
{
    /* Zero pages again, and no memory kept for them; a refusal costs a
     * pass over the table instead. */
    if (xos.madvise(e->xe_have, HAVE_BYTES(e), MADV_DONTNEED) != 0)
        memset(e->xe_have, 0, HAVE_BYTES(e));
}

/* Empty the working memory once XAC_WORKING_MIB of copies went into it.
 * No page may be open or kept: their contents go. */
static void trim(struct xac_env *e)
{
    if (e->xe_loaded < e->xe_trim_pages)
        return;
    drop_kept(e);
    /* Best effort: if the hole cannot be punched, the memory stays.  The
     * contents go either way, as far as load() knows. */
    (void)xos.fallocate(e->xe_memfd,
                        FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
                        (off_t)e->xe_len);
    forget_contents(e);
    e->xe_loaded = 0;
}

/* Revoke access to every touched page and forget them. */
static void release_pages(struct xac_env *e)
{
    size_t i;

    if (e->xe_ntouched > 0 &&
        protect_runs(e, e->xe_touched, e->xe_ntouched, any_page,
                     PROT_NONE) != 0) {
        revoke_all(e);
        for (i = 0; i < e->xe_nkept; i++)
            e->xe_pstate[e->xe_kept[i]] &= (uint8_t)~XP_KEPT;
    }
    xmv_end(e);
    for (i = 0; i < e->xe_ntouched; i++)
        e->xe_pstate[e->xe_touched[i]] &= XP_STICKY;
    e->xe_ntouched = 0;
    e->xe_tsorted = 1;
    drop_kept(e);
}

/* Keep the touched pages readable for the next transaction
 * (xSetKeepPages): written pages become read-only again if their
 * versions were published (ok), or are revoked (their contents are not
 * a committed version).  Read-only means write-protected (xac_wp.c)
 * where the segment has a userfaultfd, which leaves the mapping alone. */
static void keep_pages(struct xac_env *e, int ok)
{
    uint32_t pg;
    size_t i;
    int wp = ok && e->xe_uffd >= 0;

    if (wp && protect_runs(e, e->xe_touched, e->xe_ntouched, written_page,
                           PROT_WP) != 0)
        wp = 0; /* fall back to mprotect, below */
    if (!wp && protect_runs(e, e->xe_touched, e->xe_ntouched, written_page,
                            ok ? PROT_READ : PROT_NONE) != 0) {
        release_pages(e);
        return;
    }
    xmv_end(e);
    for (i = 0; i < e->xe_ntouched; i++) {
        pg = e->xe_touched[i];
        if (!ok && written_page(e->xe_pstate[pg])) {
            e->xe_pstate[pg] &= XP_STICKY;
            continue;
        }
        if (wp && written_page(e->xe_pstate[pg]))
            e->xe_pstate[pg] |= XP_WP;
        if (!(e->xe_pstate[pg] & XP_LISTED))
            e->xe_kept[e->xe_nkept++] = pg;
        e->xe_pstate[pg] = (uint8_t)(XP_KEPT | XP_LISTED |
                                     (e->xe_pstate[pg] & XP_WP));
    }
    e->xe_ntouched = 0;
    e->xe_tsorted = 1;
    /* Kept pages hold the versions current at the snapshot, or at our
     * commit if it came right after it; otherwise another process
     * committed in between, and the next xbegin revokes them. */
    if (e->xe_committed_at == 0)
        e->xe_kept_stamp = e->xe_snap;
    else if (e->xe_committed_at == e->xe_snap + 1)
        e->xe_kept_stamp = e->xe_committed_at;
    else
        e->xe_kept_stamp = UINT64_MAX;
}

/* Our commit published the written pages as versions xe_committed_at:
 * the working memory holds those. */
static void name_written(struct xac_env *e)
{
    size_t i;

    for (i = 0; i < e->xe_ntouched; i++)
        if (written_page(e->xe_pstate[e->xe_touched[i]]))
            e->xe_have[e->xe_touched[i]] = e->xe_committed_at + 1;
}

int xac_txn_finish(int commit)
{
    struct xac_env *e = &xac_env;
    int rc = 0;

    sort_touched(e);
    e->xe_committed_at = 0;
    if (commit)
        rc = xmv_commit(e);
    if (e->xe_committed_at != 0)
        name_written(e);
    if (e->xe_keep && xmv_alone(e))
        keep_pages(e, commit && rc == 0);
    else
        release_pages(e);
    trim(e);
    return rc;
}

static int txn_start(int query)
{
    struct xac_env *e = &xac_env;
    int alone;

    if (!e->xe_inited)
        return XAC_ENOTINIT;
    if (e->xe_base == NULL)
        return XAC_ENOTMAPPED;
    if (e->xe_depth > 0) {
        if (e->xe_qdepth != 0 && !query)
            return XAC_EQUERY;
        e->xe_depth++;
        if (query && e->xe_qdepth == 0)
            e->xe_qdepth = e->xe_depth;
        return 0;
    }
    if (!query && xlog_failed(e))
        return XAC_EIO;
    e->xe_failed = 0;
    e->xe_conflict = 0;
    e->xe_nbefore = 0;
    e->xe_update = !query;
    xmv_begin(e);
    /* One look at the other slots serves both uses below. */
    alone = (e->xe_nkept > 0 || e->xe_uffd >= 0) && xmv_alone(e);
    e->xe_wp_now = e->xe_uffd >= 0 && e->xe_keep && alone;
    /* Kept pages are valid only if nobody else committed since they were
     * (and stay so only while nobody else is attached). */
    if (e->xe_nkept > 0 && (e->xe_snap != e->xe_kept_stamp || !alone))
        drop_kept(e);
    e->xe_qdepth = query ? 1 : 0;
    e->xe_depth = 1;
    return 0;
}

/* Randomized exponential backoff after a conflict abort. */
static void backoff(struct xac_env *e)
{
    uint64_t lim, us;
    struct timespec ts;

    if (e->xe_backoff_us == 0)
        return;
    if (e->xe_aborts < 30)
        e->xe_aborts++;
    lim = (uint64_t)1 << e->xe_aborts;
    if (lim > e->xe_backoff_us)
        lim = e->xe_backoff_us;
    e->xe_rand = e->xe_rand * 6364136223846793005ULL + 1442695040888963407ULL +
                 (uint64_t)e->xe_ctl.cx_slot;
    us = (e->xe_rand >> 33) % (lim + 1);
    ts.tv_sec = (time_t)(us / 1000000);
    ts.tv_nsec = (long)(us % 1000000) * 1000L;
    xos.nanosleep(&ts, NULL);
}

static int txn_stop(int query)
{
    struct xac_env *e = &xac_env;
    int in_query, commit, rc;

    if (e->xe_depth == 0)
        return XAC_ENOTXN;
    in_query = e->xe_qdepth != 0 && e->xe_depth >= e->xe_qdepth;
    if (in_query != query)
        return XAC_EQUERY;
    if (e->xe_depth == e->xe_qdepth)
        e->xe_qdepth = 0;
    if (e->xe_depth > 1) {
        e->xe_depth--;
        if (e->xe_update && !e->xe_failed && xmv_doomed(e))
            e->xe_failed = e->xe_conflict = 1;
        return e->xe_failed ? FAILED : PENDING;
    }
    if (e->xe_update && !e->xe_failed && xmv_doomed(e))
        e->xe_failed = e->xe_conflict = 1;
    commit = !e->xe_failed && !query;
    rc = xac_txn_finish(commit);
    e->xe_depth = 0;
    if (rc == XAC_EIO)
        return rc;
    if (rc == ABORTED || rc == XAC_EFULL || (!commit && !query)) {
        if (e->xe_conflict || rc == ABORTED)
            backoff(e);
        return rc == XAC_EFULL ? rc : ABORTED;
    }
    e->xe_aborts = 0;
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
    if (xac_env.xe_depth == 0)
        return XAC_ENOTXN;
    xac_env.xe_failed = 1;
    return 0;
}

int xValidate(void)
{
    struct xac_env *e = &xac_env;

    if (e->xe_depth == 0)
        return XAC_ENOTXN;
    if (e->xe_update && !e->xe_failed && (xmv_doomed(e) || xmv_stale(e)))
        e->xe_failed = e->xe_conflict = 1;
    return e->xe_failed ? FAILED : PENDING;
}

int setPageAccess(void *addr, int mode)
{
    struct xac_env *e = &xac_env;
    char *a = addr;
    uint32_t pg;
    int want;

    if (e->xe_depth == 0)
        return XAC_ENOTXN;
    if (mode != READ && mode != READ_WRITE)
        return XAC_EINVAL;
    if (a < e->xe_base || a >= e->xe_base + e->xe_len)
        return XAC_EBADADDR;
    want = mode == READ ? XP_READ : XP_WRITE;
    if (want == XP_WRITE && e->xe_qdepth != 0)
        return XAC_EQUERY;
    pg = (uint32_t)((size_t)(a - e->xe_base) >> e->xe_pshift);
    if ((e->xe_pstate[pg] & XP_LEVEL) >= want)
        return 0;
    return xac_grant(pg, want, 0);
}

int xSetKeepPages(int on)
{
    struct xac_env *e = &xac_env;
    int was = e->xe_keep;

    if (!e->xe_inited)
        return XAC_ENOTINIT;
    if (e->xe_depth > 0)
        return XAC_EINTXN;
    e->xe_keep = on != 0;
    if (!e->xe_keep && e->xe_base != NULL)
        drop_kept(e);
    if (e->xe_keep && e->xe_base != NULL && e->xe_uffd < 0)
        xwp_open(e, 0); /* mapped while keeping was off */
    return was;
}
