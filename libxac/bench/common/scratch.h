/* scratch.h: the private directory a storage benchmark works in, and its
 * progress lines.
 *
 * xb_scratch_create(parent) makes a fresh directory
 * "<parent>/xaclab-<prog>-XXXXXX" (parent: --dir, else $TMPDIR, else /tmp)
 * and removes it, with everything in it, when the process exits through
 * exit() or a return from main.  Forked children must leave with _exit() so
 * that they do not remove it under their parent.  It prints one sentence on
 * stderr and exits 2 if parent is not a writable directory (a bad --dir is
 * a usage error).
 */
#ifndef XB_SCRATCH_H
#define XB_SCRATCH_H

#include <stddef.h>

const char *xb_scratch_create(const char *parent, const char *prog);

/* Write back every dirty page of the file system that holds dir
 * (syncfs), so that what ran before (another benchmark, an earlier
 * repetition, the tree just loaded) is not written back during the timed
 * part and charged to it.  Benchmarks call it right before they start the
 * clock.  0, or an errno value (the caller may ignore it: only the
 * measurement's noise depends on it). */
int xb_settle(const char *dir);

/* Remove path and everything under it (ignores errors). */
void xb_remove_tree(const char *path);

/* Join dir and name into buf (of size len); aborts if it does not fit. */
char *xb_path(char *buf, size_t len, const char *dir, const char *name);

/* Print "xaclab-progress <fraction> <message>" on stderr (docs/suites.md). */
void xb_progress(double fraction, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Print "prog: <message>: <strerror(errno)>" on stderr and exit 1. */
void xb_die_errno(const char *what) __attribute__((noreturn));

#endif
