/* xac_int.h: LIBXAC's process-wide state, composed of one part per
 * module.  docs/libxac.md has the same map.
 *
 * The coordinating modules see all of struct xac_env:
 *   xac_env.c     xInit/xShutdown, the public setters   xe_ (this struct)
 *   xac_map.c     xMmap/xMunmap/xCheckpoint             xmap_, mp_
 *   xac_txn.c     xbegin/xend, kept pages, advisory     tx_ (xac_txn.h)
 *   xac_fault.c   SIGSEGV/SIGBUS handler, granting      xflt_, ft_
 *   xac_commit.c  snapshots, writer words, validation,  xcm_
 *                 the commit (calls store and log)
 *   xac_contend.c admission, escalation, backoff,       xcn_, cn_
 *                 conflict statistics
 *   xac_stats.c   xStats
 * The others see only their own part (their header) and the control file:
 *   xac_seg.c     version store: attach, detach, repair xseg_, sg_ (and the
 *                                                       sh_/pe_/fr_ fields
 *                                                       of xac.seg)
 *   xac_gc.c      garbage collection of the store       xgc_
 *   xac_log.c     log records, append, direct write     xlog_, lg_
 *   xac_logfile.c log files, descriptors, syncs         xlf_
 *   xac_group.c   group commit, leader placement        xgrp_
 *   xac_ckpt.c    checkpoints, xArchive's files         xckpt_, ck_
 *   xac_recover.c recovery                              xrcv_
 *   xac_wp.c      userfaultfd access control            xwp_, wp_
 *   xac_ctl.c     shared control file                   xctl_, ch_/cs_
 *   xac_config.c  the XAC_* environment table           xcfg_, cf_/cv_
 *   xac_os.c      system-call table                     xos_
 *   xac_crc.c     CRC32C
 *   xac_error.c   xStrerror, assertion failures
 * The store (xac_seg.c, xac_gc.c) never calls the log and the log never
 * calls the store: xac_commit.c and xac_map.c call both.
 */
#ifndef XAC_INT_H
#define XAC_INT_H

#include <stddef.h>
#include <sys/types.h>

#include "xac_contend.h"
#include "xac_ctl.h"
#include "xac_fault.h"
#include "xac_log.h"
#include "xac_map.h"
#include "xac_seg.h"
#include "xac_txn.h"
#include "xac_wp.h"

struct xac_env {
    int xe_inited;
    int xe_flags;             /* NONDURABLE or DURABLE */
    pid_t xe_pid;             /* process that called xInit (fork check) */
    size_t xe_psize;          /* page size */
    unsigned xe_pshift;       /* log2(xe_psize) */
    char *xe_dir;             /* the xInit directory */
    struct xctl xe_ctl;       /* shared control file */
    struct xmap xe_map;       /* the mapped file, the working memory */
    struct xtxn xe_tx;        /* the transaction */
    struct xcontend xe_cn;    /* contention management */
    struct xfault xe_flt;     /* the fault handler */
    struct xwp xe_wp;         /* userfaultfd access control */
    struct xseg xe_seg;       /* the version store */
    struct xlog xe_log;       /* the log (DURABLE) */
};

extern struct xac_env xac_env;

#endif
