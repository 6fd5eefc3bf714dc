/* xac_recover.h: recovery (xac_recover.c): bring a data file up to date
 * from the log, as the first process to use it. */
#ifndef XAC_RECOVER_H
#define XAC_RECOVER_H

#include "xac_log.h"

/* Recover the data file datafd (named path) from the log, as the first
 * process to map it: replay every record after the checkpoint, sync the
 * data file, start the log afresh and write a checkpoint.  Call with the
 * control file's flock held.  0 or an errno value. */
int xrcv_recover(struct xlog *lg, int datafd, const char *path);
/* xRecover(name): as xrcv_recover, unless another process has a segment
 * mapped (XAC_EMAPPED).  0 or an error. */
int xrcv_file(struct xlog *lg, const char *name);
/* At xInit(DURABLE): recover the file the checkpoint names if no other
 * process uses the directory.  0 or errno. */
int xrcv_at_init(struct xlog *lg);

#endif
