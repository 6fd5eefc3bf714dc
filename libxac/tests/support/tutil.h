/* tutil.h: helpers the unit tests share. */
#ifndef XAC_TUTIL_H
#define XAC_TUTIL_H

#include <stddef.h>
#include <sys/types.h>

#include "xac.h"

/* Make a fresh directory under $TMPDIR (or /tmp), chdir into it, and
 * remove it with everything in it at exit. */
const char *tu_tmpdir(void);

/* Read len bytes at off of file path with pread(2) into buf; returns the
 * number of bytes read or -1. */
ssize_t tu_read(const char *path, void *buf, size_t len, off_t off);

/* The int at byte offset off of file path (read with pread(2)). */
int tu_int_at(const char *path, off_t off);

/* Size of file path, or -1. */
off_t tu_size(const char *path);

/* Fork; the child runs fn(arg) and then _exit(0)s.  Returns the wait
 * status of the child. */
int tu_in_child(void (*fn)(void *), void *arg);

/* Did a child with wait status st die of a crash (SIGSEGV, SIGBUS for a
 * write-protected page, or a sanitizer report, which exits non-zero)? */
int tu_crashed(int st);

/* Running under valgrind? */
int tu_valgrind(void);

/* The running kernel's vm.max_map_count, or -1 if it cannot be read:
 * tests derive their sizes from it, since database hosts often raise
 * it. */
long tu_max_map_count(void);

/* Mappings this process has now (lines of /proc/self/maps), or -1. */
long tu_maps_now(void);

/* xStats() now; aborts if it fails. */
struct xac_stats tu_stats(void);

/* ints in one page (a test's stride from one page to the next).  Inline:
 * under valgrind a call inside a loop of faulting loads changes which
 * register valgrind 3.19 resumes wrongly (see test_07). */
static inline size_t tu_ipp(void)
{
    return PAGESIZE / sizeof(int);
}

/* Int pointer to page n of the segment at base.  With declare (set under
 * valgrind), the access is declared first with setPageAccess: valgrind
 * 3.19 resumes some faulting loads with a wrong register after the
 * SIGSEGV handler (see test_07).  Inline for the same reason as tu_ipp. */
static inline int *tu_page(int *base, int n, int mode, int declare)
{
    int *p = base + (size_t)n * tu_ipp();
    if (declare)
        setPageAccess(p, mode);
    return p;
}

/* A read of page n (as tu_page) that the compiler cannot drop. */
static inline int tu_peek(int *base, int n, int declare)
{
    return *(volatile int *)tu_page(base, n, READ, declare);
}

/* One transaction that adds v to x[idx] (its page declared READ_WRITE
 * first, as tu_page does under valgrind), retried while it aborts.
 * Returns xbegin's error or xend's result. */
int tu_commit_add(int *x, size_t idx, int v);

/* Fork a writer: on the byte 'g' from pipe fd hear, it attaches
 * (xInit("ctl", NONDURABLE), xMmap(file, npages pages)), commits the first
 * int of page n = v (declared first if declare, as tu_page does), detaches
 * and says 'd' down pipe fd tell ('n' if the commit failed).  The OS
 * table is reset in the child.  Returns the child's pid. */
pid_t tu_spawn_writer(int hear, int tell, const char *file, int npages,
                      int n, int v, int declare);

/* A test with children: a scratch directory (tu_tmpdir), the pipes down
 * (to the children) and up (from them), and file (npages pages) mapped
 * in store "ctl", NONDURABLE.  Aborts if any step fails.  Returns the
 * mapping. */
int *tu_store_with_pipes(const char *file, int npages, int down[2],
                         int up[2]);

/* Fork a reader of store "ctl": it attaches (xInit NONDURABLE, xMmap(file,
 * npages pages)), opens a read-only transaction that reads the first int,
 * and says 'r' down pipe fd tell; on each 'n' from pipe fd hear it ends
 * that transaction and opens another at the newest snapshot ('r' again);
 * on any other byte it ends it and detaches.  It holds the oldest
 * snapshot meanwhile, as a process descheduled inside a transaction
 * does.  The OS table is reset in the child.  Returns the child's pid. */
pid_t tu_spawn_reader(int hear, int tell, const char *file, int npages);

/* Wait for child pid: did it exit with status 0? */
int tu_reap(pid_t pid);

/* Send byte c down pipe fd to the other process (abort if it cannot). */
void tu_tell(int fd, char c);

/* A byte from the other process, or '?' after 60 s (a child that died
 * early must not hang the test). */
char tu_hear(int fd);

#endif
