/* xac_os.h: every system call LIBXAC makes, behind one swappable table.
 *
 * As in SQLite's os_unix.c aSyscall[], the library never calls the OS
 * directly: it calls xos.<name>(...).  A test may point an entry at its own
 * function to inject a failure (an mprotect that returns ENOMEM, a pwrite
 * that returns EIO) and must call xos_reset() afterwards.  Each entry has
 * the signature of the system call it stands for (open takes its mode
 * explicitly).
 */
#ifndef XAC_OS_H
#define XAC_OS_H

#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

struct xos_table {
    int (*open)(const char *path, int flags, mode_t mode);
    int (*close)(int fd);
    int (*fstat)(int fd, struct stat *st);
    int (*ftruncate)(int fd, off_t length);
    int (*fallocate)(int fd, int mode, off_t off, off_t len);
    int (*fdatasync)(int fd);
    int (*fsync)(int fd);
    int (*unlink)(const char *path);
    int (*mkdir)(const char *path, mode_t mode);
    ssize_t (*pread)(int fd, void *buf, size_t n, off_t off);
    ssize_t (*pwrite)(int fd, const void *buf, size_t n, off_t off);
    void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd,
                  off_t off);
    int (*munmap)(void *addr, size_t len);
    void *(*mremap)(void *old, size_t old_len, size_t new_len, int flags);
    int (*mprotect)(void *addr, size_t len, int prot);
    int (*madvise)(void *addr, size_t len, int advice);
    int (*sigaction)(int sig, const struct sigaction *act,
                     struct sigaction *old);
    pid_t (*getpid)(void);
    int (*kill)(pid_t pid, int sig);
    int (*flock)(int fd, int op);
    long (*pagesize)(void);
    int (*nanosleep)(const struct timespec *req, struct timespec *rem);
    int (*sched_yield)(void);
    /* sched_getcpu(3): the CPU the caller runs on, or -1 (group commit
     * prefers leaders on CPUs whose syncs complete sooner). */
    int (*getcpu)(void);
    int (*clock_gettime)(clockid_t clk, struct timespec *ts);
    /* futex(2) on a word in a MAP_SHARED mapping (op FUTEX_WAIT or
     * FUTEX_WAKE, never the _PRIVATE forms): group commit sleeps on it. */
    long (*futex)(uint32_t *word, int op, uint32_t val,
                  const struct timespec *timeout);
    /* userfaultfd(2) and ioctl(2): write protection of readable pages
     * (xac_wp.c). */
    int (*userfaultfd)(int flags);
    int (*ioctl)(int fd, unsigned long req, void *arg);
    /* posix_fadvise(3): returns 0 or an errno value, like it.  The data
     * file is read and written a page at a time in no order, so LIBXAC
     * asks for POSIX_FADV_RANDOM: readahead would fill the page cache with
     * large folios, and every 4 KiB write into one costs several times a
     * write into a page (ext4 on Linux 6.18: 12 us against 3 us).  The
     * first write into the file after its store was made drops its cached
     * pages (POSIX_FADV_DONTNEED, xac_seg.c): folios read ahead earlier
     * keep a readahead mark that POSIX_FADV_RANDOM does not disarm.  It
     * asks for the ones that were cached back (POSIX_FADV_WILLNEED), in
     * small folios. */
    int (*fadvise)(int fd, off_t off, off_t len, int advice);
    /* mincore(2): which pages of the data file were cached before that
     * drop, to be read back in small folios (xac_seg.c). */
    int (*mincore)(void *addr, size_t len, unsigned char *vec);
};

extern struct xos_table xos;

/* Put every entry back to the real system call. */
void xos_reset(void);

/* Write all len bytes of src at off through xos.pwrite, retrying short
 * writes and EINTR.  0, or an errno value (EIO if a write accepts no
 * bytes). */
int xos_write_all(int fd, const void *src, size_t len, off_t off);
/* Read len bytes at off into dst through xos.pread, retrying short reads
 * and EINTR.  Past the end of the file: zeros if zero_past_eof, else EIO.
 * 0 or an errno value.  Async-signal-safe. */
int xos_read_all(int fd, void *dst, size_t len, off_t off, int zero_past_eof);

/* The CPUs this process may run on (its affinity mask), at least 1. */
unsigned xos_cpus(void);

/* CLOCK_MONOTONIC in ns through xos.clock_gettime; 0 if it fails. */
uint64_t xos_now_ns(void);

/* Read /proc/<pid>/stat into buf (n bytes): a pointer to the ')' that
 * ends the command name (field 2; the fields after it follow, each after
 * one space), or NULL if it cannot be read. */
const char *xos_proc_stat(pid_t pid, char *buf, size_t n);

/* Process start time in clock ticks since boot (field 22 of
 * /proc/<pid>/stat), 0 if it cannot be read.  A pid plus its start time
 * names a process even after the pid is reused. */
unsigned long long xos_proc_start(pid_t pid);

/* Tell valgrind's memcheck (when running under it) that faults on the
 * segment [addr, addr + len) are LIBXAC's page-access detection, not
 * errors (on = 1), or that they are errors again (on = 0).  A no-op
 * otherwise. */
void xos_expect_faults(void *addr, size_t len, int on);

#endif
