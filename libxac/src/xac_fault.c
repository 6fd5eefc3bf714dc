/* xac_fault.c: the SIGSEGV handler that detects page accesses, and the
 * code that grants a transaction access to a page.  The same handler
 * takes the SIGBUS of a write to a write-protected page (xac_wp.c).
 *
 * The segment is the process's working memory (a memfd), mapped twice:
 * the segment the program sees, PROT_NONE outside the pages the current
 * transaction has touched, and a second, always read-write view that only
 * the library uses.  Granting access to a page copies its snapshot version
 * (from the data file, or from a frame of the version pool) into the
 * working memory through the second view with one pread, then opens the
 * page with one mprotect: PROT_READ to read it, PROT_READ|PROT_WRITE to
 * write it.  (Under page-table access, xac_wp.c, the segment is
 * read-write, a page has no entry until one UFFDIO_CONTINUE maps it, and
 * every fault arrives as SIGBUS.)  A write then needs no copy-on-write
 * fault of its own and no page allocation (the working memory keeps its
 * pages between transactions), and a snapshot version in the pool costs
 * the same as one in the file (no per-page mmap).  On x86-64 the
 * page-fault error code tells a write fault from a read fault, so a first
 * write costs one SIGSEGV, not the thesis's two; elsewhere (and under
 * valgrind, which does not pass the error code) a write to an untouched
 * page takes a read grant and then a second fault.
 *
 * Everything reachable from the handler is async-signal-safe: system calls
 * through the xos table and stores into preallocated arrays.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "xac_assert.h"
#include "xac_commit.h"
#include "xac_contend.h"
#include "xac_fault.h"
#include "xac_int.h"
#include "xac_log.h"
#include "xac_os.h"
#include "xac_seg.h"
#include "xac_share.h"
#include "xac_wp.h"

/* Spans (in pages, powers of two) tried in turn when a one-page mprotect
 * fails with ENOMEM because the process has vm.max_map_count mappings
 * (thesis appendix A.1, item 4).  The last resort is the whole segment,
 * which is always one mapping. */
static const uint32_t coarse_spans[] = {512, 32768};

/* Set the state of pg to st (a level and XP_OWN), adding it to the
 * touched pages on its first access in this transaction.  A kept page
 * stops being kept: it is in the readset now. */
static void mark(struct xac_env *e, uint32_t pg, int st)
{
    struct xmap *mp = &e->xe_map;
    struct xtxn *tx = &e->xe_tx;
    uint8_t cur = tx->tx_pstate[pg];

    if ((cur & XP_LEVEL) == XP_NONE) {
        if (tx->tx_ntouched > 0 && tx->tx_touched[tx->tx_ntouched - 1] >= pg)
            tx->tx_tsorted = 0;
        XASSERT(tx->tx_ntouched < tx->tx_tcap);
        tx->tx_touched[tx->tx_ntouched++] = pg;
    }
    if ((st & XP_LEVEL) == XP_WRITE && (cur & XP_LEVEL) != XP_WRITE) {
        xlog_keep_before(&e->xe_log, pg,
                         mp->mp_back + ((size_t)pg << e->xe_pshift));
        mp->mp_have[pg] = 0; /* until our commit names the contents */
    }
    tx->tx_pstate[pg] = (uint8_t)((cur & XP_STICKY) | st);
}

/* Lift the write protection of pg (xac_wp.c).  0 or an errno value. */
static int lift(struct xac_env *e, uint32_t pg)
{
    if (xwp_protect(&e->xe_wp, pg, 1, 0) != 0)
        return errno;
    e->xe_tx.tx_pstate[pg] &= (uint8_t)~XP_WP;
    return 0;
}

/* A read grant while pages are kept under write protection: protect the
 * page first (the kernel leaves a marker in an empty entry), then map it
 * read-write, so that the first write raises SIGBUS and costs an ioctl,
 * not an mprotect.  Always protects, whatever XP_WP says: a write that
 * went unseen would be lost.  -1 if either step fails (the caller falls
 * back to PROT_READ). */
static int grant_read_wp(struct xac_env *e, uint32_t pg, int flags)
{
    char *addr = e->xe_map.mp_base + ((size_t)pg << e->xe_pshift);

    if (xwp_protect(&e->xe_wp, pg, 1, 1) != 0)
        return -1;
    e->xe_tx.tx_pstate[pg] |= XP_WP;
    if (xos.mprotect(addr, e->xe_psize, PROT_READ | PROT_WRITE) != 0)
        return -1;
    mark(e, pg, XP_READ | flags);
    return 0;
}

/* Page-table access (xac_wp.c): the page has no entry unless the working
 * memory holds its snapshot version; map it, write-protected for a read.
 * (xflt_grant lifts the protection of a mapped page itself; xwp_map still
 * copes with one.) */
static int grant_pte(struct xac_env *e, uint32_t pg, int want, int flags)
{
    struct xtxn *tx = &e->xe_tx;
    int rc = xwp_map(&e->xe_wp, pg, want == XP_READ);

    if (rc != 0)
        return errno;
    if (want == XP_READ)
        tx->tx_pstate[pg] |= XP_WP;
    else
        tx->tx_pstate[pg] &= (uint8_t)~XP_WP;
    mark(e, pg, want | flags);
    return 0;
}

/* Does the working memory hold the snapshot version of pg already?  Pages
 * in the readset and kept pages do. */
static int holds_version(uint8_t st)
{
    return (st & XP_LEVEL) != XP_NONE || (st & XP_KEPT) != 0;
}

static int prot_of(int st)
{
    return (st & XP_LEVEL) == XP_WRITE ? PROT_READ | PROT_WRITE : PROT_READ;
}

/* Copy the snapshot version of page pg into the working memory.  A page
 * past the end of its file reads as zeros.
 *
 * Between transactions a page's access is revoked (so that the next read
 * is seen), but its contents stay.  If the newest committed version is in
 * the snapshot, the snapshot version is that one; its stamp names it, and
 * if the working memory holds it already (mp_have: loaded, or written
 * by our own commit, since) there is nothing to copy.  Commits after the
 * snapshot do not matter: their stamps are larger, and the version below
 * them stays the snapshot's.  Read pe_newest before the copy: a version
 * committed meanwhile is newer than the snapshot, so the copy still
 * holds the version the stamp names.  XAC_REUSE=0 always copies, as
 * before. */
static int load(struct xac_env *e, uint32_t pg)
{
    struct xmap *mp = &e->xe_map;
    struct xtxn *tx = &e->xe_tx;
    uint64_t newest = xseg_newest(&e->xe_seg, pg);
    uint32_t f;
    int fd, rc;
    off_t off;

    if (mp->mp_reuse && newest <= tx->tx_snap &&
        mp->mp_have[pg] == newest + 1) {
        e->xe_flt.ft_reused++;
        return 0;
    }
    f = xseg_find(&e->xe_seg, pg, tx->tx_snap);
    fd = f != 0 ? e->xe_seg.sg_poolfd : mp->mp_fd;
    off = (off_t)(f != 0 ? f : pg) << e->xe_pshift;
    rc = xos_read_all(fd, mp->mp_back + ((size_t)pg << e->xe_pshift),
                      e->xe_psize, off, 1);
    mp->mp_have[pg] = rc == 0 && newest <= tx->tx_snap ? newest + 1 : 0;
    if (rc == 0) {
        mp->mp_loaded++;
        e->xe_flt.ft_copied++;
        e->xe_flt.ft_new += xmap_hold(mp, pg);
    }
    return rc;
}

/* Under page-table access, a query's read fault also maps the pages
 * around it, in an aligned window of XFLT_AROUND pages (when pages are
 * kept).  A query has no
 * readset to keep small and never validates: any page may be mapped
 * that holds the version its snapshot reads, and then one fault, one
 * pread per run of versions in the data file and one UFFDIO_CONTINUE
 * per run do what a fault per page did.  A B+-tree's
 * nodes lie in the file in the order they were allocated, not in key
 * order, so the pages around one search are other searches' pages.
 * They join the kept pages at once (they are no part of the query), so
 * the query's end keeps them and a later transaction revokes those that
 * commits changed (xac_txn.c). */
#define XFLT_AROUND 64u

/* Copy in the snapshot versions of pages [a, b), which the working
 * memory neither maps nor holds: one pread for each run whose versions
 * are in the data file, load() for the others.  0 or an errno value. */
static int load_run(struct xac_env *e, uint32_t a, uint32_t b)
{
    struct xmap *mp = &e->xe_map;
    uint64_t snap = e->xe_tx.tx_snap, newest[XFLT_AROUND];
    uint32_t p = a, q, i;
    unsigned sh = e->xe_pshift;
    int rc;

    while (p < b) {
        if (xseg_find(&e->xe_seg, p, snap) != 0) {
            if ((rc = load(e, p)) != 0)
                return rc;
            p++;
            continue;
        }
        /* As in load(): each stamp before the copy. */
        for (q = p; q < b && xseg_find(&e->xe_seg, q, snap) == 0; q++)
            newest[q - a] = xseg_newest(&e->xe_seg, q);
        rc = xos_read_all(mp->mp_fd, mp->mp_back + ((size_t)p << sh),
                          (size_t)(q - p) << sh, (off_t)p << sh, 1);
        for (i = p; i < q; i++)
            mp->mp_have[i] =
                rc == 0 && newest[i - a] <= snap ? newest[i - a] + 1 : 0;
        if (rc != 0)
            return rc;
        mp->mp_loaded += q - p;
        e->xe_flt.ft_copied += q - p;
        for (i = p; i < q; i++)
            e->xe_flt.ft_new += xmap_hold(mp, i);
        p = q;
    }
    return 0;
}

/* Map pages [a, b) write-protected (none is mapped yet).  0, or -1
 * with none of them mapped: a page mapped but not known as kept would
 * never be revoked. */
static int open_run(struct xac_env *e, uint32_t a, uint32_t b)
{
    uint32_t p;

    if (xwp_map_run(&e->xe_wp, a, b - a) == 0)
        return 0;
    for (p = a; p < b; p++) { /* before Linux 6.6, or some page mapped */
        if (xwp_map(&e->xe_wp, p, 1) != 0) {
            AZ(xwp_revoke(&e->xe_wp, a, b - a));
            return -1;
        }
    }
    return 0;
}

/* After a query's read fault on pg: map the window around it. */
static void fault_around(struct xac_env *e, uint32_t pg)
{
    struct xtxn *tx = &e->xe_tx;
    uint32_t lo = pg & ~(XFLT_AROUND - 1), hi = lo + XFLT_AROUND, a, b, p;

    if (hi > e->xe_map.mp_npages)
        hi = e->xe_map.mp_npages;
    for (a = lo; a < hi; a = b) {
        /* A run of pages neither touched nor kept. */
        while (a < hi && (tx->tx_pstate[a] & (XP_LEVEL | XP_KEPT)) != 0)
            a++;
        for (b = a; b < hi && (tx->tx_pstate[b] & (XP_LEVEL | XP_KEPT)) == 0;
             b++)
            ;
        if (a == b)
            continue;
        /* Best effort: a page that fails faults later like any other. */
        if (load_run(e, a, b) != 0 || open_run(e, a, b) != 0)
            return;
        for (p = a; p < b; p++) {
            if (!(tx->tx_pstate[p] & XP_LISTED)) {
                XASSERT(tx->tx_nkept < tx->tx_tcap);
                tx->tx_kept[tx->tx_nkept++] = p;
            }
            tx->tx_pstate[p] |= (uint8_t)(XP_KEPT | XP_LISTED |
                                          (e->xe_wp.wp_pte ? XP_WP : 0));
        }
        e->xe_flt.ft_around += b - a;
    }
}

/* Grant mode want on the whole span [lo, hi) around the page: every page
 * in it joins the readset (or writeset), which only costs false conflicts.
 * Pages granted write but never written are written back unchanged.  The
 * untouched pages of the span get their snapshot versions first. */
static int grant_coarse(struct xac_env *e, uint32_t pg, int want)
{
    struct xmap *mp = &e->xe_map;
    struct xtxn *tx = &e->xe_tx;
    size_t i;
    uint32_t lo, hi, p;
    int level, rc;

    for (i = 0; i <= sizeof coarse_spans / sizeof coarse_spans[0]; i++) {
        if (i < sizeof coarse_spans / sizeof coarse_spans[0]) {
            lo = pg & ~(coarse_spans[i] - 1);
            hi = lo + coarse_spans[i] < mp->mp_npages
                     ? lo + coarse_spans[i] : mp->mp_npages;
        } else {
            lo = 0;
            hi = mp->mp_npages;
        }
        level = want;
        for (p = lo; p < hi; p++)
            if ((tx->tx_pstate[p] & XP_LEVEL) > level)
                level = tx->tx_pstate[p] & XP_LEVEL;
        for (p = lo; p < hi; p++)
            if (!holds_version(tx->tx_pstate[p]) && (rc = load(e, p)) != 0)
                return rc;
        if (xos.mprotect(mp->mp_base + ((size_t)lo << e->xe_pshift),
                         (size_t)(hi - lo) << e->xe_pshift,
                         prot_of(level)) == 0) {
            for (p = lo; p < hi; p++) {
                uint8_t st = tx->tx_pstate[p];
                if ((st & XP_LEVEL) < level) {
                    if (level == XP_WRITE && tx->tx_update &&
                        !tx->tx_failed && xcm_acquire(e, p))
                        st |= XP_OWN;
                    mark(e, p, (st & XP_OWN) | level);
                }
            }
            e->xe_flt.ft_escalations++;
            return 0;
        }
        if (errno != ENOMEM)
            return errno;
    }
    return ENOMEM;
}

int xflt_grant(uint32_t pg, int want, int by_wp)
{
    struct xac_env *e = &xac_env;
    struct xtxn *tx = &e->xe_tx;
    char *addr = e->xe_map.mp_base + ((size_t)pg << e->xe_pshift);
    uint8_t cur = tx->tx_pstate[pg];
    int flags = cur & XP_OWN, rc;

    if (tx->tx_update && !tx->tx_failed && xcm_doomed(e)) {
        tx->tx_failed = 1; /* another transaction won a conflict */
        tx->tx_conflict = 1;
    }
    if (want == XP_WRITE && tx->tx_update && !tx->tx_failed &&
        !(cur & XP_OWN) && xcm_acquire(e, pg))
        flags |= XP_OWN;
    /* A page newer than the snapshot: read the newer version if the
     * snapshot can move forward, else the transaction will not validate
     * (updates only; a query reads its snapshot). */
    if (tx->tx_update && !tx->tx_failed &&
        xseg_newest(&e->xe_seg, pg) > tx->tx_snap &&
        !xcm_extend(e)) {
        tx->tx_failed = 1;
        tx->tx_conflict = 1;
        xcn_blame(&e->xe_cn, pg);
    }
    if (!holds_version(cur) && (rc = load(e, pg)) != 0)
        return rc;
    /* A kept page is readable already. */
    if (want == XP_READ && (cur & XP_KEPT)) {
        mark(e, pg, want | flags);
        return 0;
    }
    /* Under page-table access a page that holds its version is mapped and
     * write-protected: a write grant (setPageAccess, no fault) is one
     * ioctl that lifts the protection, not a UFFDIO_CONTINUE that fails
     * with EEXIST first. */
    if (e->xe_wp.wp_pte && want == XP_WRITE && holds_version(cur))
        by_wp = 1;
    /* Mapped read-write and write-protected: one ioctl opens it. */
    if (by_wp) {
        if ((rc = lift(e, pg)) != 0)
            return rc;
        mark(e, pg, want | flags);
        return 0;
    }
    if (e->xe_wp.wp_pte)
        return grant_pte(e, pg, want, flags);
    if (want == XP_READ && e->xe_wp.wp_now && grant_read_wp(e, pg, flags) == 0)
        return 0;
    /* Through mprotect, a protection the entry may carry must go too. */
    if (want == XP_WRITE && (cur & XP_WP) && (rc = lift(e, pg)) != 0)
        return rc;
    if (xos.mprotect(addr, e->xe_psize, prot_of(want)) == 0) {
        mark(e, pg, want | flags);
        return 0;
    }
    if (errno != ENOMEM)
        return errno;
    return grant_coarse(e, pg, want);
}

/* Did the faulting access write?  0 when the machine does not say. */
static int fault_is_write(void *ucv)
{
#if defined(__x86_64__)
    const ucontext_t *uc = ucv;
    return (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#elif defined(__aarch64__)
    /* The kernel appends an esr_context record to the signal frame. */
    const ucontext_t *uc = ucv;
    const unsigned char *p = uc->uc_mcontext.__reserved;
    const unsigned char *end = p + sizeof uc->uc_mcontext.__reserved;
    while (p + 8 <= end) {
        const struct { unsigned magic, size; } *h = (const void *)p;
        if (h->magic == 0 || h->size == 0)
            break;
        if (h->magic == 0x45535201) { /* ESR_MAGIC */
            unsigned long long esr;
            memcpy(&esr, p + 8, sizeof esr);
            return ((esr >> 26) & 0x3f) == 0x24 && (esr & (1u << 6)) != 0;
        }
        p += h->size;
    }
    return 0;
#else
    (void)ucv;
    return 0;
#endif
}

static void say(const char *msg)
{
    ssize_t rc = write(STDERR_FILENO, msg, strlen(msg));
    (void)rc;
}

/* Not our fault: hand it to the handler that was there before xInit, or
 * let it take the default action, which re-executing the faulting
 * instruction does (with a core dump pointing at the real culprit). */
static void chain(int sig, siginfo_t *si, void *uc)
{
    const struct sigaction *o =
        sig == SIGBUS ? &xac_env.xe_flt.ft_oldbus : &xac_env.xe_flt.ft_oldsegv;
    struct sigaction dfl;

    if (o->sa_flags & SA_SIGINFO) {
        o->sa_sigaction(sig, si, uc);
        return;
    }
    if (o->sa_handler != SIG_DFL && o->sa_handler != SIG_IGN) {
        o->sa_handler(sig);
        return;
    }
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    xos.sigaction(sig, &dfl, NULL);
    if (si->si_code <= 0) /* sent by kill(), not a fault */
        raise(sig);
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    struct xac_env *e = &xac_env;
    struct xmap *mp = &e->xe_map;
    struct xtxn *tx = &e->xe_tx;
    int saved = errno;
    char *a = si->si_addr;
    uint32_t pg;
    int cur, want, bus = sig == SIGBUS, by_wp = bus;

    /* SIGBUS in the segment comes from its userfaultfd (xac_wp.c): a
     * write to a write-protected page, or under page-table access any
     * access to a page with no entry; the memory file is as long as the
     * segment, so nothing else raises it there. */
    if (si->si_code > 0 && tx->tx_depth > 0 && mp->mp_base != NULL &&
        a >= mp->mp_base && a < mp->mp_base + mp->mp_len &&
        (!bus || e->xe_wp.wp_fd >= 0)) {
        pg = (uint32_t)((size_t)(a - mp->mp_base) >> e->xe_pshift);
        cur = tx->tx_pstate[pg] & XP_LEVEL;
        /* Only a page that is mapped (readable) can be write-protected. */
        if (e->xe_wp.wp_pte)
            by_wp = holds_version(tx->tx_pstate[pg]);
        /* Readable pages (in the readset, or kept) fault only on writes. */
        want = (by_wp || cur == XP_READ || (tx->tx_pstate[pg] & XP_KEPT) ||
                fault_is_write(uc)) ? XP_WRITE : XP_READ;
        if (cur == XP_WRITE && by_wp && lift(e, pg) == 0) {
            /* A protection left from before the mapping opened. */
            errno = saved;
            return;
        }
        if (cur == XP_WRITE) {
            say("libxac: fault on a page the transaction may write\n");
        } else if (want == XP_WRITE && tx->tx_qdepth != 0) {
            say("libxac: write to the segment in a read-only transaction "
                "(xbeginQuery)\n");
        } else if (!tx->tx_update && tx->tx_keep && want == XP_READ &&
                   xsh_map(e, pg) == 0) {
            /* The window is the data file's now (xac_share.c). */
            e->xe_flt.ft_faults++;
            errno = saved;
            return;
        } else if (xflt_grant(pg, want, by_wp) == 0) {
            e->xe_flt.ft_faults++;
            if (!tx->tx_update && tx->tx_keep && want == XP_READ &&
                e->xe_wp.wp_pte)
                fault_around(e, pg);
            errno = saved;
            return;
        } else {
            say("libxac: cannot give the transaction access to a page\n");
        }
    }
    chain(sig, si, uc);
    errno = saved;
}

int xflt_install(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (xos.sigaction(SIGSEGV, &sa, &xac_env.xe_flt.ft_oldsegv) != 0)
        return errno;
    if (xos.sigaction(SIGBUS, &sa, &xac_env.xe_flt.ft_oldbus) != 0) {
        AZ(xos.sigaction(SIGSEGV, &xac_env.xe_flt.ft_oldsegv, NULL));
        return errno;
    }
    return 0;
}

void xflt_uninstall(void)
{
    AZ(xos.sigaction(SIGSEGV, &xac_env.xe_flt.ft_oldsegv, NULL));
    AZ(xos.sigaction(SIGBUS, &xac_env.xe_flt.ft_oldbus, NULL));
}
