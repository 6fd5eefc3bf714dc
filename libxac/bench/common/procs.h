/* procs.h: a group of worker processes that start together.
 *
 * Every benchmark that runs several processes (kv_driver.c, behind
 * tree_insert, tree_blocks, bdb_insert and lmdb_insert; concurrency_test;
 * concurrency_records) runs them with one call, xb_procs_run(), which
 * goes through the same four steps:
 *
 *   1. fork   flush stdio (so nothing buffered is printed twice) and fork n
 *             children; child k runs body(self, k, arg) and _exit()s with
 *             what it returns (never exit(): that would remove the scratch
 *             directory, scratch.h);
 *   2. ready  each child prepares (opens its store, xInit, xMmap ...) and
 *             says how that went with one status byte, xb_proc_ready():
 *             XB_PROC_READY, or any other byte the program gives a meaning
 *             (a refusal, a failure);
 *   3. go     the parent collects every child's byte, starts the clock,
 *             and releases all children at once (one write) if every one
 *             said XB_PROC_READY, or else tells them all to stop;
 *   4. reap   the parent waits for every child, records each one's exit
 *             and their CPU time, and stops the clock.
 *
 * A child that exits before its status byte counts as having said 0; a
 * child's ready end is closed once it has spoken, so a child that dies
 * early never leaves the parent waiting.  What the children measure comes
 * back through memory they share with the parent (xb_shared_new), written
 * before they exit and read after xb_procs_run returns.
 *
 * Errors of fork, pipe, write and wait4 end the program (xb_die_errno):
 * a benchmark that cannot run its processes has nothing to report.
 */
#ifndef XB_PROCS_H
#define XB_PROCS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define XB_PROCS_MAX 64
#define XB_PROC_READY 'r'

/* A child's ends of the two pipes. */
struct xb_proc {
    int ready_fd, go_fd;
};

/* What the parent saw of the group. */
struct xb_procs {
    int n;
    pid_t pid[XB_PROCS_MAX];
    char said[XB_PROCS_MAX];  /* status bytes in the order they came */
    int failed[XB_PROCS_MAX]; /* child k did not exit 0 */
    int nfailed;              /* how many did not */
    uint64_t start_ns;        /* CLOCK_MONOTONIC, right before the go */
    uint64_t end_ns;          /* when the last child was reaped */
    double user_s, sys_s;     /* the children's CPU time */
};

/* The body of child k; returns its exit status. */
typedef int (*xb_proc_body)(const struct xb_proc *self, int k, void *arg);

/* Run body on n (1 .. XB_PROCS_MAX) children, steps 1 to 4, and fill g.
 * Returns the number of children that said XB_PROC_READY: n if they were
 * released, fewer if they were told to stop. */
int xb_procs_run(struct xb_procs *g, int n, xb_proc_body body, void *arg);

/* Child: report status; with XB_PROC_READY wait for the parent's word.
 * Returns 1 to go on, 0 if the parent said stop (or status was not
 * XB_PROC_READY, or the parent is gone). */
int xb_proc_ready(const struct xb_proc *self, char status);

/* After xb_procs_run: how many children said status. */
int xb_procs_said(const struct xb_procs *g, char status);

/* Zeroed memory that the children write and the parent reads (an
 * anonymous shared mapping, inherited at fork). */
void *xb_shared_new(size_t bytes);
void xb_shared_free(void *p, size_t bytes);

#endif
