/* xac_group.h: group commit (xac_group.c): one process at a time, the
 * leader, syncs the log for every committer waiting on it, and the
 * leader runs where syncs complete soonest (XAC_LEAD_BY_CPU). */
#ifndef XAC_GROUP_H
#define XAC_GROUP_H

#include <stdint.h>

#include "xac_log.h"

/* Wait until the log is stable up to LSN end, leading the sync if no
 * process does (not under ch_lock).  0 or XAC_EIO. */
int xgrp_wait(struct xlog *lg, uint64_t end);
/* As the only process attached, holding ch_lock: sync the log up to its
 * tail now, without the wait.  0 or XAC_EIO (then the log is failed). */
int xgrp_sync_locked(struct xlog *lg);
/* Make the log stable up to its tail (DURABLE; 0 otherwise).  0 or
 * XAC_EIO. */
int xgrp_sync_all(struct xlog *lg);
/* Publish the CPU we run on in our slot: a committer about to lead the
 * group's sync leaves it to a process on a CPU whose syncs complete
 * sooner (XAC_LEAD_BY_CPU). */
void xgrp_note_cpu(struct xlog *lg);

#endif
