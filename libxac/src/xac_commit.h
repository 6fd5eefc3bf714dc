/* xac_commit.h: the commit protocol (xac_commit.c): snapshots, writer
 * words and conflict policies, validation, and the commit itself, which
 * publishes the writeset in the version store and, DURABLE, its record
 * in the log.  The one module on the commit path that calls both. */
#ifndef XAC_COMMIT_H
#define XAC_COMMIT_H

#include <stdint.h>

struct xac_env;
struct xseg;

/* Take a transaction id and a snapshot. */
void xcm_begin(struct xac_env *e);
/* Take the writer word of pg following the conflict policy; marks the
 * transaction failed if it loses.  Returns 1 if we own it.
 * Async-signal-safe. */
int xcm_acquire(struct xac_env *e, uint32_t pg);
/* Has another transaction killed ours (policy)?  Async-signal-safe. */
int xcm_doomed(struct xac_env *e);
/* Does any touched or kept page have a version newer than the snapshot?
 * 1 + the first such page, or 0. */
uint32_t xcm_stale(struct xac_env *e);
/* Move the snapshot of the running transaction to the newest commit if
 * nothing it touched (or kept) changed since its snapshot.  Returns 1 if
 * it moved.  Async-signal-safe. */
int xcm_extend(struct xac_env *e);
/* Is this the only process attached to the control file? */
int xcm_alone(struct xac_env *e);
/* Validate and publish the writeset of the (sorted) touched pages.
 * Returns 0 (committed), ABORTED (validation failed) or an error. */
int xcm_commit(struct xac_env *e);
/* Release writer words and the slot's transaction. */
void xcm_end(struct xac_env *e);
/* The frames in use above which a nondurable pool commit collects
 * (pool_collect_due says why there is a bound). */
uint64_t xcm_lazy_bound(const struct xseg *sg);

#endif
