/* xac_share.c: read-only transactions that read unchanged pages straight
 * from the data file's page cache (xac_share.h).
 *
 * A query copies each page it reads into the process's working memory
 * (xac_fault.c, load), so N processes searching one tree hold N copies of
 * it, and most of their time goes to allocating and filling those copies:
 * 8 processes searching a 52 MB B+-tree on 2 CPUs ran at 0.31-0.81 times
 * Berkeley DB's rate, whose readers share one cache.  Yet for most pages
 * the version a query's snapshot reads is the data file's (no pool version
 * at or below the snapshot: xseg_find() is 0), and the data file's page
 * cache is one copy that every process can map.
 *
 * So under page-table access a query's read fault on a window of
 * XSH_PAGES aligned pages, none of them touched or kept, each reading its
 * snapshot version from the data file, maps that window of the data file
 * over the working memory's mapping (read-only, shared, MAP_FIXED)
 * instead of copying it.  Its pages become kept pages flagged XP_FILE,
 * read with no fault at all until they are revoked.
 *
 * Why the mapped contents stay the snapshot's.  The data file changes
 * only when garbage collection writes a pool version V of a page into it
 * (xac_gc.c, writeback), and V is at most the oldest running snapshot m;
 * or when the last process leaves, or at recovery, with no other process
 * attached.  While a query with snapshot S >= m runs, a page whose
 * S-version was the file's had no pool version at or below S, and every
 * later commit is stamped above S: no V <= m can be written to it.
 * Between transactions a window stays mapped like any kept page.  A V
 * written to one of its pages then is a version stamped above the kept
 * stamp (its query would otherwise have read it from the pool), so the
 * next xbegin's revoke_changed (xac_txn.c) finds the page in the change
 * ring and gives the window back before the transaction reads anything.
 *
 * Giving a window back maps the working memory there again and registers
 * it with the userfaultfd, so that its pages fault again.  The working
 * memory's own contents of those pages were never touched, so what
 * load() records it holds (mp_have) stays true.  Every path that revokes
 * kept pages gives the windows back first: a revoked page of the data
 * file's mapping would just be read from the file again, unseen.  An
 * update transaction gives back all windows at xbegin: its reads must
 * fault (its readset), and its writes go to the working memory.
 *
 * XAC_SHARE=0 turns this off; so do mprotect access (XAC_PTE=0, valgrind)
 * and xSetKeepPages(0).
 */
#include <sys/mman.h>

#include "xac_assert.h"
#include "xac_int.h"
#include "xac_os.h"
#include "xac_seg.h"
#include "xac_share.h"
#include "xac_wp.h"

/* Can window [lo, lo + XSH_PAGES) be mapped from the data file for the
 * running query? */
static int window_reads_file(struct xac_env *e, uint32_t lo)
{
    const uint8_t *ps = e->xe_tx.tx_pstate;
    uint64_t snap = e->xe_tx.tx_snap;
    uint32_t p;

    for (p = lo; p < lo + XSH_PAGES; p++)
        if ((ps[p] & (XP_LEVEL | XP_KEPT)) != 0 ||
            xseg_find(&e->xe_seg, p, snap) != 0)
            return 0;
    return 1;
}

int xsh_map(struct xac_env *e, uint32_t pg)
{
    struct xmap *mp = &e->xe_map;
    struct xtxn *tx = &e->xe_tx;
    uint32_t lo = pg & ~(XSH_PAGES - 1), p;
    size_t len = (size_t)XSH_PAGES << e->xe_pshift;
    char *addr = mp->mp_base + ((size_t)lo << e->xe_pshift);

    if (!mp->mp_share || !e->xe_wp.wp_pte || lo + XSH_PAGES > mp->mp_npages ||
        !window_reads_file(e, lo))
        return -1;
    /* The data file is at least as long as the segment (xMmap). */
    if (xos.mmap(addr, len, PROT_READ, MAP_SHARED | MAP_FIXED, mp->mp_fd,
                 (off_t)lo << e->xe_pshift) == MAP_FAILED)
        return -1; /* the old mapping stays: copy as before */
    (void)xos.madvise(addr, len, MADV_DONTFORK); /* as the segment */
    for (p = lo; p < lo + XSH_PAGES; p++) {
        if (!(tx->tx_pstate[p] & XP_LISTED)) {
            XASSERT(tx->tx_nkept < tx->tx_tcap);
            tx->tx_kept[tx->tx_nkept++] = p;
        }
        tx->tx_pstate[p] = (uint8_t)(XP_KEPT | XP_LISTED | XP_FILE);
    }
    mp->mp_nshared++;
    e->xe_flt.ft_shared += XSH_PAGES;
    return 0;
}

void xsh_give_back(struct xac_env *e, uint32_t pg)
{
    struct xmap *mp = &e->xe_map;
    uint8_t *ps = e->xe_tx.tx_pstate;
    uint32_t lo = pg & ~(XSH_PAGES - 1), p;
    size_t len = (size_t)XSH_PAGES << e->xe_pshift;
    char *addr = mp->mp_base + ((size_t)lo << e->xe_pshift);

    void *back;

    if (!(ps[lo] & XP_FILE))
        return;
    /* Failing here would leave pages readable unseen: no way on.  (The
     * same range as the mapping it replaces, so no new mapping count.) */
    back = xos.mmap(addr, len, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_FIXED | MAP_NORESERVE, mp->mp_memfd,
                    (off_t)lo << e->xe_pshift);
    XASSERT(back == addr);
    (void)xos.madvise(addr, len, MADV_DONTFORK);
    AZ(xwp_register(&e->xe_wp, lo, XSH_PAGES));
    for (p = lo; p < lo + XSH_PAGES; p++)
        ps[p] &= (uint8_t)~(XP_KEPT | XP_FILE | XP_WP);
    XASSERT(mp->mp_nshared > 0);
    mp->mp_nshared--;
}

void xsh_give_back_all(struct xac_env *e)
{
    struct xmap *mp = &e->xe_map;
    uint32_t lo;

    for (lo = 0; mp->mp_nshared > 0 && lo < mp->mp_npages; lo += XSH_PAGES)
        xsh_give_back(e, lo);
}
