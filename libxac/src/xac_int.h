/* xac_int.h: LIBXAC's process-wide state, shared by the src/ modules.
 *
 * Modules and prefixes:
 *   xac_env.c    xInit/xShutdown/xMmap/xMunmap        xe_ fields (env)
 *   xac_txn.c    xbegin/xend/commit/abort/advisory    xac_txn_*
 *   xac_fault.c  SIGSEGV handler, granting access     xac_fault_*, xac_grant
 *   xac_wp.c     userfaultfd write protection         xwp_*
 *   xac_ctl.c    shared control file                  xctl_*, ch_/cs_ fields
 *   xac_mvcc.c   shared versions, commit, GC, policies  xmv_*, sh_/pe_/fr_
 *   xac_os.c     system-call table                    xos_*
 *   xac_error.c  xStrerror, assertion failures
 */
#ifndef XAC_INT_H
#define XAC_INT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "xac_ctl.h"

/* Per-page state of the current transaction (one byte a page). */
enum xac_pstate {
    XP_NONE = 0,  /* not touched: PROT_NONE */
    XP_READ = 1,  /* in the readset: PROT_READ, holds the snapshot version */
    XP_WRITE = 2, /* in the writeset: PROT_READ|PROT_WRITE, our copy */
    XP_LEVEL = 3, /* mask of the two above */
    XP_KEPT = 4,  /* flag, level XP_NONE: kept from an earlier transaction
                   * (xSetKeepPages): PROT_READ (or read-write under
                   * write protection, xac_wp.c), holds the version current
                   * at xe_kept_stamp, not in the current readset */
    XP_OWN = 8,   /* flag: we hold the page's writer word */
    XP_LISTED = 16, /* flag: the page is in xe_kept */
    XP_WP = 32    /* flag: the page's table entry may carry a userfaultfd
                   * write protection (xac_wp.c); survives every state */
};

/* Flags a page keeps when its transaction state is reset. */
#define XP_STICKY (XP_LISTED | XP_WP)

/* Conflict policies (xSetPolicy in xac.h). */

/* DURABLE: the first this many pages a transaction writes keep a copy of
 * their before-images, taken when write access is granted (the page holds
 * its snapshot version then), so that building the log record reads no
 * file; pages beyond them are read back from the file or the pool. */
#define XAC_BEFORE_PAGES 64

/* Per-segment shared state: the segment file "xac.seg" (xac_mvcc.c). */
struct xseg_hdr;
struct xpe;
struct xfr;

struct xac_env {
    int xe_inited;
    int xe_flags;             /* NONDURABLE */
    pid_t xe_pid;             /* process that called xInit (fork check) */
    size_t xe_psize;          /* page size */
    unsigned xe_pshift;       /* log2(xe_psize) */
    struct xctl xe_ctl;       /* shared control file */
    struct sigaction xe_oldsegv; /* handler before xInit, for chaining */
    struct sigaction xe_oldbus;  /* the same for SIGBUS */

    /* The segment (at most one). */
    char *xe_name;            /* file name as given to xMmap */
    int xe_fd;                /* data file, O_RDWR */
    char *xe_base;            /* the segment: the working memory, shared
                               * mapping, PROT_NONE except touched pages;
                               * or NULL */
    char *xe_back;            /* the same memory, always read-write: where
                               * the fault handler copies snapshot versions */
    int xe_memfd;             /* the working memory (memfd), or -1 */
    size_t xe_len;
    uint32_t xe_npages;
    size_t xe_loaded;         /* pages copied in since the last trim */
    size_t xe_trim_pages;     /* trim after this many (XAC_WORKING_MIB) */

    /* Transaction bookkeeping, sized to the segment but sparse: both are
     * anonymous MAP_NORESERVE mappings, so only the parts a transaction
     * touches take memory. */
    uint8_t *xe_pstate;       /* enum xac_pstate per page */
    uint64_t *xe_have;        /* per page: 1 + the commit stamp of the
                               * version the working memory holds, 0 if
                               * none or unknown (xac_fault.c, load) */
#define HAVE_BYTES(e) ((size_t)(e)->xe_npages * sizeof *(e)->xe_have)
    uint32_t *xe_touched;     /* pages whose state left XP_NONE, in order */
    size_t xe_ntouched;
    size_t xe_tcap;           /* capacity of xe_touched, in entries */
    int xe_tsorted;           /* xe_touched is strictly increasing */
    uint32_t *xe_kept;        /* pages flagged XP_LISTED (some no longer
                               * XP_KEPT); the second half of the
                               * xe_touched allocation */
    size_t xe_nkept;
    uint64_t xe_kept_stamp;   /* kept pages hold the versions current at
                               * this commit stamp */
    int xe_keep;              /* xSetKeepPages */
    int xe_uffd_want;         /* XAC_UFFD: may use userfaultfd (xac_wp.c) */
    int xe_reuse;             /* XAC_REUSE: a fault may skip the copy of a
                               * version the working memory holds */
    int xe_uffd;              /* userfaultfd covering the segment, or -1 */
    int xe_pte_want;          /* XAC_PTE: may grant and revoke access
                               * through page-table entries (xac_wp.c) */
    int xe_pte;               /* the segment is read-write and its pages
                               * are opened by UFFDIO_CONTINUE and revoked
                               * by MADV_DONTNEED, never by mprotect */
    int xe_cont_wp;           /* UFFDIO_CONTINUE_MODE_WP may work */
    int xe_wp_now;            /* this transaction's read grants map pages
                               * read-write under write protection */
    uint64_t xe_committed_at; /* stamp the last commit published, 0 if it
                               * published nothing */

    /* Shared version state (xac_mvcc.c). */
    int xe_segfd;             /* <dir>/xac.seg */
    int xe_poolfd;            /* <dir>/xac.pool */
    struct xseg_hdr *xe_seg;  /* MAP_SHARED mapping of xac.seg */
    size_t xe_seglen;
    struct xpe *xe_pt;        /* page table, one entry per page */
    struct xfr *xe_fr;        /* frame table, one entry per pool frame */
    uint32_t *xe_ring;        /* pages that have pool versions (FIFO) */
    char *xe_buf;             /* one page, for copying versions */
    char *xe_dir;             /* the xInit directory */

    uint64_t xe_txn;          /* global id of the outermost transaction */
    uint64_t xe_snap;         /* its snapshot (commit clock at begin) */
    int xe_update;            /* outermost is xbegin (not xbeginQuery) */
    int xe_conflict;          /* failed because of a conflict */
    int xe_policy;            /* XAC_POLICY_* */
    unsigned xe_backoff_us;   /* maximum backoff after an abort, 0 = off */
    unsigned xe_aborts;       /* consecutive conflict aborts (backoff) */
    unsigned xe_reap;         /* a dead process was seen: reap slots */
    unsigned long xe_commits; /* commits by this process (stats) */
    unsigned long xe_direct;  /* ... of them written in place (stats) */
    uint64_t xe_rand;         /* backoff random state */

    int xe_depth;             /* nesting depth, 0 outside transactions */
    int xe_qdepth;            /* depth of the outermost xbeginQuery, or 0 */
    int xe_failed;            /* the transaction will abort */
    unsigned long xe_escalations; /* coarse grants after ENOMEM (stats) */
    unsigned long xe_faults;  /* SIGSEGVs that granted access (stats) */
    unsigned long xe_extensions; /* snapshots moved forward (stats) */

    /* The durable log (xac_log.c), DURABLE only. */
    int xe_durable;           /* xInit(DURABLE) */
    int xe_sync_method;       /* XAC_SYNC_* */
    int xe_logfd;             /* log file number xe_logno, or -1 */
    uint32_t xe_logno;
    uint64_t xe_log_limit;    /* rotate a log file beyond this size */
    uint64_t xe_log_alloc;    /* bytes allocated to log file xe_logno */
    unsigned xe_commit_delay_us; /* leader waits up to this for others */
    int xe_lead_by_cpu;       /* XAC_LEAD_BY_CPU: leave the lead to a
                               * process on a CPU with faster syncs */
    unsigned long xe_leads;   /* syncs this process led (stats) */
    unsigned long xe_reused;  /* loads skipped: the working memory held
                               * the version already (stats) */
    unsigned long xe_deferred; /* waits in which it left the lead to
                               * such a process (stats) */
    char *xe_before;          /* XAC_BEFORE_PAGES pages (anonymous): the
                               * versions written pages had when the
                               * transaction was granted write access,
                               * the before-images of its record */
    uint32_t xe_bpage[XAC_BEFORE_PAGES]; /* the page of each image */
    unsigned xe_nbefore;      /* images taken in this transaction */
    char *xe_logbuf;          /* the record being built */
    size_t xe_loglen, xe_logcap;
    uint64_t xe_logend;       /* LSN just past our newest record */
    /* The alone commit's log write (xlog_append_stable): the record's
     * blocks through a descriptor opened O_DIRECT | O_DSYNC. */
    int xe_dfd;               /* log file xe_dfdno opened so, or -1 */
    uint32_t xe_dfdno;
    unsigned xe_dalign;       /* its block size; 0: not used (XAC_LOG_DIRECT
                               * is 0, or the file system refused) */
    char *xe_dbuf;            /* XLOG_DIRECT_BUF bytes, page-aligned */
    uint64_t xe_dtail;        /* xe_dbuf starts with the bytes of the
                               * block holding this LSN up to it, or 0 */
    unsigned long xe_dwrites; /* records written so (stats) */
    unsigned long xe_mybytes; /* log bytes this process wrote (stats) */
};

extern struct xac_env xac_env;

/* xac_fault.c */
int xac_fault_install(void);
void xac_fault_uninstall(void);
/* Give the transaction access mode want (XP_READ or XP_WRITE) to page pg.
 * by_wp: the access was stopped by the page's write protection (SIGBUS),
 * not by its mapping.  Returns 0 or an errno value.  Async-signal-safe. */
int xac_grant(uint32_t pg, int want, int by_wp);

/* xac_wp.c */
/* Register the segment for page-table access, else (pages kept) for
 * write protection, as far as XAC_UFFD, XAC_PTE and the kernel allow;
 * else leave xe_uffd at -1.  fresh: the segment was just mapped (no page
 * has been opened).  Never fails. */
void xwp_open(struct xac_env *e, int fresh);
void xwp_close(struct xac_env *e);
/* Write-protect (on) or unprotect n pages from pg.  0 or -1 (errno set).
 * Async-signal-safe. */
int xwp_protect(struct xac_env *e, uint32_t pg, size_t n, int on);
/* xe_pte: map page pg, write-protected if wp (a page mapped already only
 * gets that protection).  0 or -1 (errno set).  Async-signal-safe. */
int xwp_map(struct xac_env *e, uint32_t pg, int wp);
/* xe_pte: drop the entries of n pages from pg; their contents stay.  0 or
 * -1 (errno set). */
int xwp_revoke(struct xac_env *e, uint32_t pg, size_t n);

/* xac_txn.c */
/* End the transaction: write back (commit != 0) or drop the private pages,
 * and revoke access to every touched page.  Returns 0 or an errno value. */
int xac_txn_finish(int commit);

/* xac_mvcc.c */
/* Attach to (creating if first) the shared version state for the data
 * file e->xe_fd of e->xe_npages pages.  Returns 0, EBUSY (another process
 * maps another file or length) or an errno value. */
int xmv_attach(struct xac_env *e);
/* Detach; the last process writes every version back.  0 or errno. */
int xmv_detach(struct xac_env *e);
/* Take a transaction id and a snapshot. */
void xmv_begin(struct xac_env *e);
/* The pool frame holding the version of pg that snapshot snap reads, or 0
 * for the data file.  Async-signal-safe. */
uint32_t xmv_find(struct xac_env *e, uint32_t pg, uint64_t snap);
/* Newest committed stamp of page pg.  Async-signal-safe. */
uint64_t xmv_newest(struct xac_env *e, uint32_t pg);
/* Take the writer word of pg following the conflict policy; marks the
 * transaction failed if it loses.  Returns 1 if we own it.
 * Async-signal-safe. */
int xmv_acquire(struct xac_env *e, uint32_t pg);
/* Has another transaction killed ours (policy)?  Async-signal-safe. */
int xmv_doomed(struct xac_env *e);
/* Validate and publish the writeset of the (sorted) touched pages.
 * Returns 0 (committed), ABORTED (validation failed) or an error. */
int xmv_commit(struct xac_env *e);
/* Release writer words and the slot's transaction. */
void xmv_end(struct xac_env *e);
/* Does any touched or kept page have a version newer than the snapshot? */
int xmv_stale(struct xac_env *e);
/* Move the snapshot of the running transaction to the newest commit if
 * nothing it touched (or kept) changed since its snapshot.  Returns 1 if
 * it moved.  Async-signal-safe. */
int xmv_extend(struct xac_env *e);
/* Is this the only process attached to the control file? */
int xmv_alone(struct xac_env *e);
/* Write every version back into the data file if no other transaction
 * is running (xCheckpoint).  0 or errno. */
int xmv_checkpoint(struct xac_env *e);
/* The limit for writing versions into the data file: in DURABLE mode only
 * versions whose log records are stable may go there (the WAL rule). */
uint64_t xmv_wb_limit(struct xac_env *e, uint64_t m);

/* xac_log.c (DURABLE) */
/* Start the log's state from the settings XAC_SYNC, XAC_LOG_LIMIT,
 * XAC_COMMIT_DELAY_US, XAC_LOG_DIRECT and XAC_LEAD_BY_CPU.  0. */
struct xcfg;
int xlog_init(struct xac_env *e, const struct xcfg *cf);
void xlog_close(struct xac_env *e);
/* Recover the data file datafd (named path) from the log, as the first
 * process to map it: replay every record after the checkpoint, sync the
 * data file, start the log afresh and write a checkpoint.  Call with the
 * control file flock held.  0 or an errno value. */
int xlog_recover(struct xac_env *e, int datafd, const char *path);
/* At xInit(DURABLE): recover the file the checkpoint names if no other
 * process uses the directory.  0 or errno. */
int xlog_recover_at_init(struct xac_env *e);
/* Keep the before-image of pg, whose working copy holds its snapshot
 * version and is about to become writable.  Async-signal-safe. */
void xlog_keep_before(struct xac_env *e, uint32_t pg);
/* Build the redo record of the writeset (before ch_lock).  0 or errno. */
int xlog_prepare(struct xac_env *e);
/* Append the prepared record with commit stamp c (under ch_lock); sets
 * e->xe_logend.  0, or an errno value after which the log is failed. */
int xlog_append(struct xac_env *e, uint64_t c);
/* As the only process attached, holding ch_lock: append the prepared
 * record with commit stamp c and make it stable before returning.  With
 * every earlier byte of the log already stable, the record's blocks are
 * written with O_DIRECT | O_DSYNC (one write that is also the sync); else
 * xlog_append then xlog_sync_locked.  0 or XAC_EIO (the log is failed). */
int xlog_append_stable(struct xac_env *e, uint64_t c);
/* Wait until the log is stable up to LSN end (group commit; not under
 * ch_lock).  0 or XAC_EIO. */
int xlog_wait(struct xac_env *e, uint64_t end);
/* Publish the CPU we run on in our slot: a committer about to lead the
 * group's sync leaves it to a process on a CPU whose syncs complete
 * sooner (XAC_LEAD_BY_CPU). */
void xlog_note_cpu(struct xac_env *e);
/* Put the log in the failed state (fsyncgate): no commit is durable any
 * more until recovery. */
void xlog_fail(struct xac_env *e);
int xlog_failed(struct xac_env *e);
/* As the only process attached, holding ch_lock: sync the log up to its
 * tail now, without the group-commit wait.  0 or XAC_EIO (then the log is
 * failed). */
int xlog_sync_locked(struct xac_env *e);
/* Make the log stable up to its tail. */
int xlog_sync_all(struct xac_env *e);
/* Record a checkpoint: the data file holds every commit up to stamp s and
 * has been synced.  0 or errno (then the log is failed). */
int xlog_write_checkpoint(struct xac_env *e, uint64_t s);

#endif
