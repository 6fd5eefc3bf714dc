/* xac_fault.h: the SIGSEGV (and SIGBUS) handler that detects page
 * accesses, and granting a transaction access to a page (xac_fault.c). */
#ifndef XAC_FAULT_H
#define XAC_FAULT_H

#include <signal.h>
#include <stdint.h>

struct xfault {
    struct sigaction ft_oldsegv; /* handler before xInit, for chaining */
    struct sigaction ft_oldbus;  /* the same for SIGBUS */
    unsigned long ft_faults;     /* faults that granted access (stats) */
    unsigned long ft_escalations; /* coarse grants after ENOMEM (stats) */
    unsigned long ft_around;     /* pages a query's faults mapped around
                                  * the faulting page (stats) */
    unsigned long ft_reused;     /* loads skipped: the working memory held
                                  * the version already (stats) */
    unsigned long ft_shared;     /* pages queries mapped from the data file
                                  * instead of copying them (stats) */
    unsigned long ft_copied;     /* pages copied into the working memory
                                  * (stats) */
    unsigned long ft_new;        /* ... of them, into a page it did not
                                  * have yet (stats) */
};

int xflt_install(void);
void xflt_uninstall(void);
/* Give the transaction access mode want (XP_READ or XP_WRITE) to page pg.
 * by_wp: the access was stopped by the page's write protection (SIGBUS),
 * not by its mapping.  Returns 0 or an errno value.  Async-signal-safe. */
int xflt_grant(uint32_t pg, int want, int by_wp);

#endif
