/* xac_wp.h: access control through page-table entries (userfaultfd):
 * write protection of readable pages and page-table access (xac_wp.c
 * explains both).  The state of the segment's registration. */
#ifndef XAC_WP_H
#define XAC_WP_H

#include <stddef.h>
#include <stdint.h>

struct xwp {
    int wp_want;      /* XAC_UFFD: may use userfaultfd */
    int wp_pte_want;  /* XAC_PTE: may grant and revoke access through
                       * page-table entries */
    int wp_fd;        /* userfaultfd covering the segment, or -1 */
    int wp_pte;       /* the segment is read-write and its pages are
                       * opened by UFFDIO_CONTINUE and revoked by
                       * MADV_DONTNEED, never by mprotect */
    int wp_cont;      /* UFFDIO_CONTINUE_MODE_WP may work */
    int wp_now;       /* this transaction's read grants map pages
                       * read-write under write protection */
    char *wp_base;    /* the segment registered: wp_len bytes, pages of */
    size_t wp_len;    /* wp_psize = 1 << wp_pshift bytes */
    size_t wp_psize;
    unsigned wp_pshift;
};

/* Register the segment [base, base + len) for page-table access, else
 * (keep: pages are kept) for write protection, as far as wp_want,
 * wp_pte_want and the kernel allow; else leave wp_fd at -1.  fresh: the
 * segment was just mapped (no page has been opened).  Never fails. */
void xwp_open(struct xwp *wp, char *base, size_t len, size_t psize,
              unsigned pshift, int keep, int fresh);
void xwp_close(struct xwp *wp);
/* Write-protect (on) or unprotect n pages from pg.  0 or -1 (errno set).
 * Async-signal-safe. */
int xwp_protect(struct xwp *wp, uint32_t pg, size_t n, int on);
/* wp_pte: map page pg, write-protected if wprot (a page mapped already
 * only gets that protection).  0 or -1 (errno set).  Async-signal-safe. */
int xwp_map(struct xwp *wp, uint32_t pg, int wprot);
/* wp_pte: map n pages from pg, none of them mapped, write-protected.  0
 * or -1 (errno set).  Async-signal-safe. */
int xwp_map_run(struct xwp *wp, uint32_t pg, size_t n);
/* wp_pte: drop the entries of n pages from pg; their contents stay.  0 or
 * -1 (errno set). */
int xwp_revoke(struct xwp *wp, uint32_t pg, size_t n);
/* wp_pte: register n pages from pg again, after the working memory was
 * mapped there anew (xac_share.c).  0, or -1 if the kernel refused or
 * lacks an ioctl page-table access needs. */
int xwp_register(struct xwp *wp, uint32_t pg, size_t n);

#endif
