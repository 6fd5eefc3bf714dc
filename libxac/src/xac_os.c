/* xac_os.c: the system-call table (see xac_os.h). */
#include "xac_os.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define XOS_HAVE_MEMCHECK 1
#endif
#endif

static int os_open(const char *path, int flags, mode_t mode)
{
    return open(path, flags | O_CLOEXEC, mode);
}

static long os_pagesize(void)
{
    return sysconf(_SC_PAGESIZE);
}

static void *os_mremap(void *old, size_t old_len, size_t new_len, int flags)
{
    return mremap(old, old_len, new_len, flags);
}

static long os_futex(uint32_t *word, int op, uint32_t val,
                     const struct timespec *timeout)
{
    return syscall(SYS_futex, word, op, val, timeout, NULL, 0);
}

/* valgrind does not know userfaultfd (it warns and fails the call): do
 * not ask there. */
static int os_userfaultfd(int flags)
{
#ifdef XOS_HAVE_MEMCHECK
    if (RUNNING_ON_VALGRIND) {
        errno = ENOSYS;
        return -1;
    }
#endif
#ifdef SYS_userfaultfd
    return (int)syscall(SYS_userfaultfd, flags);
#else
    (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}

static int os_ioctl(int fd, unsigned long req, void *arg)
{
    return ioctl(fd, req, arg);
}

static const struct xos_table xos_default = {
    .open = os_open,
    .close = close,
    .fstat = fstat,
    .ftruncate = ftruncate,
    .fallocate = fallocate,
    .fdatasync = fdatasync,
    .fsync = fsync,
    .unlink = unlink,
    .mkdir = mkdir,
    .pread = pread,
    .pwrite = pwrite,
    .mmap = mmap,
    .munmap = munmap,
    .mremap = os_mremap,
    .mprotect = mprotect,
    .madvise = madvise,
    .sigaction = sigaction,
    .getpid = getpid,
    .kill = kill,
    .flock = flock,
    .pagesize = os_pagesize,
    .nanosleep = nanosleep,
    .sched_yield = sched_yield,
    .getcpu = sched_getcpu,
    .clock_gettime = clock_gettime,
    .futex = os_futex,
    .userfaultfd = os_userfaultfd,
    .ioctl = os_ioctl,
    .fadvise = posix_fadvise,
    .mincore = mincore,
};

struct xos_table xos = xos_default;

void xos_reset(void)
{
    xos = xos_default;
}

int xos_write_all(int fd, const void *src, size_t len, off_t off)
{
    const char *p = src;
    ssize_t n;

    while (len > 0) {
        n = xos.pwrite(fd, p, len, off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (n == 0)
            return EIO;
        p += n;
        off += n;
        len -= (size_t)n;
    }
    return 0;
}

int xos_read_all(int fd, void *dst, size_t len, off_t off, int zero_past_eof)
{
    char *p = dst;
    ssize_t n;

    while (len > 0) {
        n = xos.pread(fd, p, len, off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (n == 0) {
            if (!zero_past_eof)
                return EIO;
            memset(p, 0, len);
            return 0;
        }
        p += n;
        off += n;
        len -= (size_t)n;
    }
    return 0;
}

uint64_t xos_now_ns(void)
{
    struct timespec ts;

    if (xos.clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

unsigned xos_cpus(void)
{
    cpu_set_t set;
    int n = 0;

    if (sched_getaffinity(0, sizeof set, &set) == 0)
        n = CPU_COUNT(&set);
    return n > 0 ? (unsigned)n : 1u;
}

const char *xos_proc_stat(pid_t pid, char *buf, size_t n)
{
    char path[64];
    ssize_t got;
    int fd;

    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    fd = xos.open(path, O_RDONLY, 0);
    if (fd < 0)
        return NULL;
    got = xos.pread(fd, buf, n - 1, 0);
    xos.close(fd);
    if (got <= 0)
        return NULL;
    buf[got] = '\0';
    /* The command name (field 2) may contain spaces and parentheses. */
    return strrchr(buf, ')');
}

unsigned long long xos_proc_start(pid_t pid)
{
    char buf[1024];
    unsigned long long start = 0;
    const char *p = xos_proc_stat(pid, buf, sizeof buf);
    int field;

    if (p == NULL)
        return 0;
    for (field = 2; *p != '\0' && field < 22; p++)
        if (*p == ' ')
            field++;
    if (field == 22)
        start = strtoull(p, NULL, 10);
    return start;
}

void xos_expect_faults(void *addr, size_t len, int on)
{
#ifdef XOS_HAVE_MEMCHECK
    if (on)
        VALGRIND_DISABLE_ADDR_ERROR_REPORTING_IN_RANGE(addr, len);
    else
        VALGRIND_ENABLE_ADDR_ERROR_REPORTING_IN_RANGE(addr, len);
#else
    (void)addr;
    (void)len;
    (void)on;
#endif
}
