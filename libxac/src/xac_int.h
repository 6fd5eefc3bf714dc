/* xac_int.h: LIBXAC's process-wide state, shared by the src/ modules.
 *
 * Modules and prefixes:
 *   xac_env.c    xInit/xShutdown/xMmap/xMunmap        xe_ fields (env)
 *   xac_txn.c    xbegin/xend/commit/abort/advisory    xac_txn_*
 *   xac_fault.c  SIGSEGV handler, granting access     xac_fault_*, xac_grant
 *   xac_ctl.c    shared control file                  xctl_*, ch_/cs_ fields
 *   xac_os.c     system-call table                    xos_*
 *   xac_error.c  xStrerror, assertion failures
 */
#ifndef XAC_INT_H
#define XAC_INT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "xac_ctl.h"

/* Per-page state of the current transaction (one byte a page). */
enum xac_pstate {
    XP_NONE = 0,  /* not touched: PROT_NONE */
    XP_READ = 1,  /* in the readset: PROT_READ, shows the committed page */
    XP_WRITE = 2  /* in the writeset: PROT_READ|PROT_WRITE, private copy */
};

struct xac_env {
    int xe_inited;
    int xe_flags;             /* NONDURABLE */
    size_t xe_psize;          /* page size */
    unsigned xe_pshift;       /* log2(xe_psize) */
    struct xctl xe_ctl;       /* shared control file */
    struct sigaction xe_oldsegv; /* handler before xInit, for chaining */

    /* The segment (at most one). */
    char *xe_name;            /* file name as given to xMmap */
    int xe_fd;                /* data file, O_RDWR */
    char *xe_base;            /* MAP_PRIVATE mapping of the file, or NULL */
    size_t xe_len;
    uint32_t xe_npages;

    /* Transaction bookkeeping, sized to the segment but sparse: both are
     * anonymous MAP_NORESERVE mappings, so only the parts a transaction
     * touches take memory. */
    uint8_t *xe_pstate;       /* enum xac_pstate per page */
    uint32_t *xe_touched;     /* pages whose state left XP_NONE, in order */
    size_t xe_ntouched;
    size_t xe_tcap;           /* capacity of xe_touched, in entries */
    int xe_tsorted;           /* xe_touched is strictly increasing */

    int xe_depth;             /* nesting depth, 0 outside transactions */
    int xe_qdepth;            /* depth of the outermost xbeginQuery, or 0 */
    int xe_failed;            /* the transaction will abort */
    unsigned long xe_escalations; /* coarse grants after ENOMEM (stats) */
    unsigned long xe_faults;  /* SIGSEGVs that granted access (stats) */
};

extern struct xac_env xac_env;

/* xac_fault.c */
int xac_fault_install(void);
void xac_fault_uninstall(void);
/* Give the transaction access mode want (XP_READ or XP_WRITE) to page pg.
 * Returns 0 or an errno value.  Async-signal-safe. */
int xac_grant(uint32_t pg, int want);

/* xac_txn.c */
/* End the transaction: write back (commit != 0) or drop the private pages,
 * and revoke access to every touched page.  Returns 0 or an errno value. */
int xac_txn_finish(int commit);
int xac_txn_init(void);
void xac_txn_fini(void);

#endif
