/* xac_gc.h: garbage collection of the version store (xac_gc.c): copying
 * versions that no running snapshot needs in the pool into the data
 * file, and freeing frames that left their chains. */
#ifndef XAC_GC_H
#define XAC_GC_H

#include <stdint.h>

#include "xac_seg.h"

/* The newest stamp whose versions may go into the data file, given that
 * every running snapshot reads stamp m or newer: m, or (DURABLE, the WAL
 * rule) at most the newest stamp whose log record is stable. */
uint64_t xgc_limit(const struct xseg *sg, uint64_t m);
/* Collect up to budget pages of the ring (all if budget is 0): write
 * back what no running snapshot needs in the pool, then free the limbo
 * frames no running transaction can reach.  Under ch_lock.  0 or the
 * errno value of a failed write. */
int xgc_collect(struct xseg *sg, uint64_t budget);
/* Free the limbo frames that left their chains before the transaction
 * with id minid began (UINT64_MAX: no transaction runs).  Under ch_lock. */
void xgc_reclaim(struct xseg *sg, uint64_t minid);
/* Every committed version into data file datafd, as far as the WAL rule
 * allows (no transaction runs).  Under ch_lock.  0 or errno. */
int xgc_flush_all(struct xseg *sg, int datafd);
/* xCheckpoint's collection: take ch_lock and collect the whole ring;
 * *m gets the stamp up to which the data file holds every commit.  0 or
 * errno. */
int xgc_checkpoint(struct xseg *sg, uint64_t *m);

#endif
