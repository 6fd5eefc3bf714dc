/* xac_log.h: the DURABLE redo log.  docs/libxac-durability.md describes
 * the design and docs/libxac-formats.md the bytes on disk.
 *
 * - The log is a sequence of files "<dir>/xac.log.NNNNNNNNNN", each with a
 *   64-byte header, then records.  A record is self-describing: header
 *   {magic, length, LSN, commit stamp, transaction id, range count,
 *   CRC32C} then byte ranges {page, offset, length, bytes} of the pages it
 *   changed, diffed against the version the transaction started from.  The
 *   LSN is (file number << 32 | offset) and must equal the record's
 *   position, so stale bytes are never taken for a record; commit stamps
 *   are consecutive, so a gap ends the log.  Records of all processes go
 *   into the same file, appended under ch_lock in commit order: metadata
 *   and data of a commit are one record, never interleaved with another's
 *   (the flaw of the thesis's appendix B).
 * - Group commit: a committer appends under ch_lock and releases it; then
 *   one process at a time (the leader, ch_log_leader) syncs the log up to
 *   the tail it read and publishes ch_log_synced; the others sleep on the
 *   futex word ch_log_seq.  A dead leader is replaced after a timeout.
 * - WAL rule: a version is copied into the data file only once its record
 *   is stable (ch_log_dstamp, which the version store reads: xgc_limit).
 *   The data file is therefore always a state reachable by replaying
 *   stable records.
 * - A checkpoint (two alternating slots in "<dir>/xac.ckpt") says: the
 *   data file holds every commit up to stamp S and has been synced; replay
 *   starts in log file F.
 * - Any failed log write or sync puts the log in the failed state
 *   (ch_log_failed): the transaction and every later one get XAC_EIO; no
 *   sync is retried as if the pages were clean (PostgreSQL "fsyncgate").
 *   Recovery, run by the next first process to map the file, clears it.
 *
 * The log's files, each with one job and this state: xac_log.c (records,
 * append, the alone commit's direct write), xac_logfile.c (log files,
 * descriptors, syncs), xac_group.c (group commit), xac_ckpt.c
 * (checkpoints, archive), xac_recover.c (recovery).  None of them calls
 * the version store: the commit protocol (xac_commit.c) hands the log the
 * pages of a record and calls both.
 */
#ifndef XAC_LOG_H
#define XAC_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "xac_ctl.h"

/* The first this many pages a transaction writes keep a copy of their
 * before-images, taken when write access is granted (the page holds its
 * snapshot version then), so that building the log record reads no file;
 * the commit protocol reads the others back from the file or the pool. */
#define XAC_BEFORE_PAGES 64

struct xcfg;

struct xlog {
    /* Set by xlog_init (xInit(DURABLE)). */
    struct xctl *lg_ctl;      /* the control file: ch_log_* fields */
    const char *lg_dir;       /* the xInit directory */
    size_t lg_psize;
    unsigned lg_pshift;
    int lg_durable;           /* xInit(DURABLE) */
    int lg_sync;              /* XAC_SYNC_* */
    uint64_t lg_limit;        /* rotate a log file beyond this size */
    unsigned lg_delay_us;     /* a leader waits up to this for others */
    int lg_by_cpu;            /* XAC_LEAD_BY_CPU: leave the lead to a
                               * process on a CPU with faster syncs */
    unsigned lg_cpus;         /* CPUs this process may run on */
    /* The log file appended to (xac_logfile.c). */
    int lg_fd;                /* log file number lg_fno, or -1 */
    uint32_t lg_fno;
    uint64_t lg_alloc;        /* bytes allocated to log file lg_fno */
    /* The record being built (xac_log.c). */
    char *lg_before;          /* XAC_BEFORE_PAGES pages (anonymous): the
                               * versions written pages had when the
                               * transaction was granted write access,
                               * the before-images of its record */
    uint32_t lg_bpage[XAC_BEFORE_PAGES]; /* the page of each image */
    unsigned lg_nbefore;      /* images taken in this transaction */
    char *lg_buf;             /* the record */
    size_t lg_len, lg_cap;
    uint32_t lg_nranges;
    uint64_t lg_end;          /* LSN just past our newest record */
    /* The alone commit's log write (xlog_append_stable): the record's
     * blocks through a descriptor opened O_DIRECT | O_DSYNC. */
    int lg_dfd;               /* log file lg_dfno opened so, or -1 */
    uint32_t lg_dfno;
    unsigned lg_dalign;       /* its block size; 0: not used (XAC_LOG_DIRECT
                               * is 0, or the file system refused) */
    char *lg_dbuf;            /* XLOG_DIRECT_BUF bytes, page-aligned */
    uint64_t lg_dtail;        /* lg_dbuf starts with the bytes of the
                               * block holding this LSN up to it, or 0 */
    /* Statistics of this process. */
    unsigned long lg_dwrites; /* records written so */
    unsigned long lg_mybytes; /* log bytes written */
    unsigned long lg_leads;   /* syncs led (group commit) */
    unsigned long lg_deferred; /* waits that left the lead to a process
                                * on a CPU with faster syncs */
};

/* Start the log's state (xInit(DURABLE)) from the settings XAC_SYNC,
 * XAC_LOG_LIMIT, XAC_COMMIT_DELAY_US, XAC_LOG_DIRECT and
 * XAC_LEAD_BY_CPU.  Nothing on disk changes. */
void xlog_init(struct xlog *lg, struct xctl *cx, const char *dir,
               size_t psize, unsigned pshift, const struct xcfg *cf);
/* Close the descriptors and free the buffers (no shared state changes);
 * lg_durable becomes 0. */
void xlog_close(struct xlog *lg);
/* xSetSyncMethod: method is a valid XAC_SYNC_*. */
void xlog_set_sync(struct xlog *lg, int method);
/* Put the log in the failed state (fsyncgate): no commit is durable any
 * more until recovery. */
void xlog_fail(struct xlog *lg);
int xlog_failed(const struct xlog *lg);

/* Keep the before-image of pg, whose working copy (page) holds its
 * snapshot version and is about to become writable.  Async-signal-safe. */
void xlog_keep_before(struct xlog *lg, uint32_t pg, const char *page);
/* The before-image of pg kept at its write grant, or NULL. */
const char *xlog_before(const struct xlog *lg, uint32_t pg);
/* Forget the before-images (a transaction begins). */
static inline void xlog_forget_before(struct xlog *lg)
{
    lg->lg_nbefore = 0;
}
/* Build the redo record of a writeset of nw pages, before ch_lock:
 * xlog_record_start (0 or ENOMEM), then xlog_record_page for each written
 * page in page order (the byte ranges where after differs from before),
 * then xlog_record_end. */
int xlog_record_start(struct xlog *lg, size_t nw);
void xlog_record_page(struct xlog *lg, uint32_t pg, const void *before,
                      const void *after);
void xlog_record_end(struct xlog *lg);
/* Append the record with commit stamp c of transaction txn (under
 * ch_lock); sets lg_end.  0, or XAC_EIO or an errno value after which
 * the log is failed. */
int xlog_append(struct xlog *lg, uint64_t c, uint64_t txn);
/* As the only process attached, holding ch_lock: append the record and
 * make it stable before returning.  With every earlier byte of the log
 * already stable, the record's blocks are written with O_DIRECT | O_DSYNC
 * (one write that is also the sync); else xlog_append then
 * xgrp_sync_locked.  0 or XAC_EIO (the log is failed). */
int xlog_append_stable(struct xlog *lg, uint64_t c, uint64_t txn);

#endif
