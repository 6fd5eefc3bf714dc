/* recorder.c: the power-loss recorder, an LD_PRELOAD shim
 * (lib/xaclab-crashrec.so).  docs/crash-consistency.md; format: trace.h.
 *
 * Interposes the C library's file-system calls that change files: open
 * (to learn which descriptors name files in the watched directory and
 * which files are new), write, pwrite, writev, pwritev, ftruncate,
 * truncate, fallocate, posix_fallocate, fsync, fdatasync, sync, syncfs,
 * msync, mmap/munmap (to know which file a mapping shows), rename, unlink,
 * mkdir and the dup family.  Each call runs for real, then what it changed
 * is appended to the trace, all under one lock, so the trace's order is
 * the order the calls took effect.  A write to a descriptor opened O_SYNC
 * or O_DSYNC is followed by an XT_SYNC of its file.
 *
 * Writes through a shared mapping make no call: they reach the trace only
 * when the program calls msync(MS_SYNC) on them, as the bytes the mapping
 * holds at that moment (page-rounded), followed by an XT_SYNC.  So the
 * replay treats msync as the durability point of mapped writes; pages the
 * kernel writes back earlier on its own are not in the model.
 *
 * Nothing is recorded until XACLAB_CRASH_DIR and XACLAB_CRASH_TRACE are
 * set; the shim exports xaclab_trace_mark for the process's own marks.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "../trace.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_FDS 4096
#define MAX_FILES 4096
#define MAX_MAPS 256
#define ZERO_RUN 4096

struct fdinfo {
    int fid;  /* 0: not a file in the watched directory */
    int sync; /* opened O_SYNC or O_DSYNC */
    int dir;  /* a directory (the watched one or below) */
};

struct map {
    char *addr;
    size_t len;
    int fid;
    off_t off;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char root[PATH_MAX];
static size_t root_len;
static int trace_fd = -1;
static struct fdinfo fds[MAX_FDS];
static struct map maps[MAX_MAPS];
static int next_fid = 1;
/* inode -> fid of the files seen created (inode numbers can be reused
 * after an unlink; a new create gives a new fid). */
static ino_t fid_ino[MAX_FILES];

#define REAL(ret, name, args)                                              \
    static ret(*real_##name) args;                                         \
    static void load_##name(void)                                         \
    {                                                                      \
        if (real_##name == NULL)                                           \
            *(void **)&real_##name = dlsym(RTLD_NEXT, #name);              \
    }

REAL(int, open, (const char *, int, ...))
REAL(int, openat, (int, const char *, int, ...))
REAL(int, close, (int))
REAL(ssize_t, write, (int, const void *, size_t))
REAL(ssize_t, pwrite, (int, const void *, size_t, off_t))
REAL(ssize_t, writev, (int, const struct iovec *, int))
REAL(ssize_t, pwritev2, (int, const struct iovec *, int, off_t, int))
REAL(int, ftruncate, (int, off_t))
REAL(int, truncate, (const char *, off_t))
REAL(int, fallocate, (int, int, off_t, off_t))
REAL(int, posix_fallocate, (int, off_t, off_t))
REAL(int, fsync, (int))
REAL(int, fdatasync, (int))
REAL(void, sync, (void))
REAL(int, syncfs, (int))
REAL(int, msync, (void *, size_t, int))
REAL(void *, mmap, (void *, size_t, int, int, int, off_t))
REAL(int, munmap, (void *, size_t))
REAL(int, rename, (const char *, const char *))
REAL(int, renameat, (int, const char *, int, const char *))
REAL(int, renameat2, (int, const char *, int, const char *, unsigned))
REAL(int, unlink, (const char *))
REAL(int, unlinkat, (int, const char *, int))
REAL(int, mkdir, (const char *, mode_t))
REAL(int, mkdirat, (int, const char *, mode_t))
REAL(int, dup, (int))
REAL(int, dup2, (int, int))
REAL(int, dup3, (int, int, int))
REAL(int, fcntl, (int, int, ...))

__attribute__((constructor)) static void recorder_init(void)
{
    const char *dir = getenv("XACLAB_CRASH_DIR");
    const char *trace = getenv("XACLAB_CRASH_TRACE");
    load_open();
    if (dir == NULL || trace == NULL || strlen(dir) + 2 > sizeof root)
        return;
    snprintf(root, sizeof root, "%s/", dir);
    root_len = strlen(root);
    int fd = real_open(trace, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND |
                                  O_CLOEXEC, 0600);
    if (fd < 0) {
        fprintf(stderr, "xaclab-crashrec: cannot open %s: %s\n", trace,
                strerror(errno));
        _exit(125);
    }
    trace_fd = fd;
}

static int recording(void)
{
    return trace_fd >= 0;
}

static void emit(const struct xt_rec *r, const void *payload,
                 size_t payload_len)
{
    load_write();
    struct iovec iov[2] = {{(void *)r, sizeof *r},
                           {(void *)payload, payload_len}};
    load_writev();
    size_t want = sizeof *r + payload_len;
    ssize_t n = real_writev(trace_fd, iov, payload_len ? 2 : 1);
    if (n != (ssize_t)want) { /* a short trace would replay wrong states */
        fprintf(stderr, "xaclab-crashrec: trace write failed\n");
        _exit(125);
    }
}

static void emit_simple(uint32_t type, int fid, uint64_t off, uint64_t len)
{
    struct xt_rec r = {type, (uint32_t)fid, off, len, 0};
    emit(&r, NULL, 0);
}

/* The name of path relative to the watched directory, or NULL when it is
 * not inside it.  Relative paths are taken from dirfd or the working
 * directory. */
static const char *inside(int dirfd, const char *path, char *buf, size_t len)
{
    char base[PATH_MAX];
    if (path == NULL)
        return NULL;
    if (path[0] == '/') {
        snprintf(buf, len, "%s", path);
    } else {
        if (dirfd == AT_FDCWD) {
            if (getcwd(base, sizeof base) == NULL)
                return NULL;
        } else {
            char link[64];
            snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
            ssize_t n = readlink(link, base, sizeof base - 1);
            if (n < 0)
                return NULL;
            base[n] = '\0';
        }
        snprintf(buf, len, "%s/%s", base, path);
    }
    if (strncmp(buf, root, root_len) != 0)
        return NULL;
    return buf + root_len;
}

static int fid_of_ino(ino_t ino)
{
    for (int f = next_fid - 1; f >= 1; f--)
        if (fid_ino[f] == ino)
            return f;
    return 0;
}

static void emit_name(uint32_t type, int fid, const char *a, const char *b)
{
    char buf[2 * PATH_MAX];
    size_t la = strlen(a) + 1, lb = b ? strlen(b) + 1 : 0;
    if (la + lb > sizeof buf)
        return;
    memcpy(buf, a, la);
    if (b)
        memcpy(buf + la, b, lb);
    struct xt_rec r = {type, (uint32_t)fid, 0, la + lb, 0};
    emit(&r, buf, la + lb);
}

/* After open/openat returned fd for path: learn it; a new file gets a fid
 * and an XT_CREATE. */
static void opened(int fd, int dirfd, const char *path, int flags,
                   int existed)
{
    char buf[PATH_MAX * 2];
    const char *name = inside(dirfd, path, buf, sizeof buf);
    struct stat st;
    if (fd < 0 || fd >= MAX_FDS || name == NULL || fstat(fd, &st) != 0)
        return;
    memset(&fds[fd], 0, sizeof fds[fd]);
    if (S_ISDIR(st.st_mode)) {
        fds[fd].dir = 1;
        return;
    }
    if (!S_ISREG(st.st_mode))
        return;
    int fid = existed ? fid_of_ino(st.st_ino) : 0;
    if (fid == 0 && next_fid < MAX_FILES) {
        fid = next_fid++;
        fid_ino[fid] = st.st_ino;
        emit_name(XT_CREATE, fid, name, NULL);
        if (st.st_size > 0) /* opened with O_TRUNC off an unseen file */
            emit_simple(XT_SIZE, fid, (uint64_t)st.st_size, 0);
    } else if (flags & O_TRUNC) {
        emit_simple(XT_SIZE, fid, 0, 0);
    }
    fds[fd].fid = fid;
    fds[fd].sync = (flags & (O_SYNC | O_DSYNC)) != 0;
}

static int exists(int dirfd, const char *path)
{
    struct stat st;
    return fstatat(dirfd, path, &st, 0) == 0;
}

static int tracked(int fd)
{
    return recording() && fd >= 0 && fd < MAX_FDS && fds[fd].fid != 0;
}

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return 0;
    return 1;
}

static void emit_data(int fid, uint64_t off, const void *data, size_t n)
{
    if (n >= ZERO_RUN && all_zero(data, n)) {
        emit_simple(XT_ZERO, fid, off, n);
        return;
    }
    struct xt_rec r = {XT_WRITE, (uint32_t)fid, off, n, 0};
    emit(&r, data, n);
}

static void after_write(int fd, uint64_t off, const void *data, size_t n)
{
    emit_data(fds[fd].fid, off, data, n);
    if (fds[fd].sync)
        emit_simple(XT_SYNC, fds[fd].fid, 0, 0);
}

/* Where a write() or writev() on fd lands. */
static uint64_t current_offset(int fd)
{
    load_fcntl();
    int fl = real_fcntl(fd, F_GETFL);
    struct stat st;
    if (fl >= 0 && (fl & O_APPEND) && fstat(fd, &st) == 0)
        return (uint64_t)st.st_size;
    off_t at = lseek(fd, 0, SEEK_CUR);
    return at < 0 ? 0 : (uint64_t)at;
}

static void *gather(const struct iovec *iov, int cnt, size_t n)
{
    unsigned char *buf = malloc(n ? n : 1);
    size_t at = 0;
    for (int i = 0; buf != NULL && i < cnt && at < n; i++) {
        size_t k = iov[i].iov_len < n - at ? iov[i].iov_len : n - at;
        memcpy(buf + at, iov[i].iov_base, k);
        at += k;
    }
    return buf;
}

/* ---- open ---- */

static int do_openat(int dirfd, const char *path, int flags, mode_t mode)
{
    load_openat();
    if (!recording())
        return real_openat(dirfd, path, flags, mode);
    pthread_mutex_lock(&lock);
    int existed = exists(dirfd, path);
    int fd = real_openat(dirfd, path, flags, mode);
    int err = errno;
    if (fd >= 0)
        opened(fd, dirfd, path, flags, existed);
    pthread_mutex_unlock(&lock);
    errno = err;
    return fd;
}

static mode_t mode_arg(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE
               ? (mode_t)va_arg(ap, int)
               : 0;
}

int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return do_openat(AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return do_openat(AT_FDCWD, path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return do_openat(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return do_openat(dirfd, path, flags, mode);
}

int __open_2(const char *path, int flags)
{
    return do_openat(AT_FDCWD, path, flags, 0);
}

int __open64_2(const char *path, int flags)
{
    return do_openat(AT_FDCWD, path, flags, 0);
}

int __openat_2(int dirfd, const char *path, int flags)
{
    return do_openat(dirfd, path, flags, 0);
}

int __openat64_2(int dirfd, const char *path, int flags)
{
    return do_openat(dirfd, path, flags, 0);
}

int creat(const char *path, mode_t mode)
{
    return do_openat(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

int creat64(const char *path, mode_t mode)
{
    return do_openat(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

int close(int fd)
{
    load_close();
    if (recording() && fd >= 0 && fd < MAX_FDS) {
        pthread_mutex_lock(&lock);
        memset(&fds[fd], 0, sizeof fds[fd]);
        pthread_mutex_unlock(&lock);
    }
    return real_close(fd);
}

static int dup_done(int from, int to)
{
    if (to >= 0 && to < MAX_FDS && from >= 0 && from < MAX_FDS &&
        recording()) {
        pthread_mutex_lock(&lock);
        fds[to] = fds[from];
        pthread_mutex_unlock(&lock);
    }
    return to;
}

int dup(int fd)
{
    load_dup();
    return dup_done(fd, real_dup(fd));
}

int dup2(int fd, int to)
{
    load_dup2();
    return dup_done(fd, real_dup2(fd, to));
}

int dup3(int fd, int to, int flags)
{
    load_dup3();
    return dup_done(fd, real_dup3(fd, to, flags));
}

static int do_fcntl(int fd, int cmd, void *arg)
{
    load_fcntl();
    int rc = real_fcntl(fd, cmd, arg);
    if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
        dup_done(fd, rc);
    return rc;
}

int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return do_fcntl(fd, cmd, arg);
}

int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return do_fcntl(fd, cmd, arg);
}

/* ---- writes ---- */

ssize_t write(int fd, const void *buf, size_t n)
{
    load_write();
    if (!tracked(fd))
        return real_write(fd, buf, n);
    pthread_mutex_lock(&lock);
    uint64_t off = current_offset(fd);
    ssize_t rc = real_write(fd, buf, n);
    int err = errno;
    if (rc > 0)
        after_write(fd, off, buf, (size_t)rc);
    pthread_mutex_unlock(&lock);
    errno = err;
    return rc;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    load_pwrite();
    if (!tracked(fd))
        return real_pwrite(fd, buf, n, off);
    pthread_mutex_lock(&lock);
    ssize_t rc = real_pwrite(fd, buf, n, off);
    int err = errno;
    if (rc > 0)
        after_write(fd, (uint64_t)off, buf, (size_t)rc);
    pthread_mutex_unlock(&lock);
    errno = err;
    return rc;
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    return pwrite(fd, buf, n, off);
}

static ssize_t vec_write(int fd, const struct iovec *iov, int cnt,
                         off_t off, int flags, int positioned)
{
    load_writev();
    load_pwritev2();
    if (!tracked(fd))
        return positioned ? real_pwritev2(fd, iov, cnt, off, flags)
                          : real_writev(fd, iov, cnt);
    pthread_mutex_lock(&lock);
    uint64_t at = positioned && off >= 0 ? (uint64_t)off : current_offset(fd);
    ssize_t rc = positioned ? real_pwritev2(fd, iov, cnt, off, flags)
                            : real_writev(fd, iov, cnt);
    int err = errno;
    if (rc > 0) {
        void *data = gather(iov, cnt, (size_t)rc);
        if (data != NULL)
            after_write(fd, at, data, (size_t)rc);
        free(data);
    }
    pthread_mutex_unlock(&lock);
    errno = err;
    return rc;
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    return vec_write(fd, iov, cnt, -1, 0, 0);
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    return vec_write(fd, iov, cnt, off, 0, 1);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off_t off)
{
    return vec_write(fd, iov, cnt, off, 0, 1);
}

ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off,
                 int flags)
{
    return vec_write(fd, iov, cnt, off, flags, 1);
}

ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off_t off,
                    int flags)
{
    return vec_write(fd, iov, cnt, off, flags, 1);
}

/* ---- sizes ---- */

static void size_changed(int fd)
{
    struct stat st;
    if (fstat(fd, &st) == 0)
        emit_simple(XT_SIZE, fds[fd].fid, (uint64_t)st.st_size, 0);
}

int ftruncate(int fd, off_t len)
{
    load_ftruncate();
    if (!tracked(fd))
        return real_ftruncate(fd, len);
    pthread_mutex_lock(&lock);
    int rc = real_ftruncate(fd, len);
    int err = errno;
    if (rc == 0)
        emit_simple(XT_SIZE, fds[fd].fid, (uint64_t)len, 0);
    pthread_mutex_unlock(&lock);
    errno = err;
    return rc;
}

int ftruncate64(int fd, off_t len)
{
    return ftruncate(fd, len);
}

int truncate(const char *path, off_t len)
{
    load_truncate();
    if (!recording())
        return real_truncate(path, len);
    /* Through a descriptor, so the file is known by its fid. */
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return real_truncate(path, len);
    int rc = ftruncate(fd, len), err = errno;
    close(fd);
    errno = err;
    return rc;
}

int truncate64(const char *path, off_t len)
{
    return truncate(path, len);
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
    load_fallocate();
    if (!tracked(fd))
        return real_fallocate(fd, mode, off, len);
    pthread_mutex_lock(&lock);
    int rc = real_fallocate(fd, mode, off, len);
    int err = errno;
    if (rc == 0) {
        if (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))
            emit_simple(XT_ZERO, fds[fd].fid, (uint64_t)off, (uint64_t)len);
        size_changed(fd);
    }
    pthread_mutex_unlock(&lock);
    errno = err;
    return rc;
}

int fallocate64(int fd, int mode, off_t off, off_t len)
{
    return fallocate(fd, mode, off, len);
}

int posix_fallocate(int fd, off_t off, off_t len)
{
    load_posix_fallocate();
    if (!tracked(fd))
        return real_posix_fallocate(fd, off, len);
    pthread_mutex_lock(&lock);
    int rc = real_posix_fallocate(fd, off, len);
    if (rc == 0)
        size_changed(fd);
    pthread_mutex_unlock(&lock);
    return rc;
}

int posix_fallocate64(int fd, off_t off, off_t len)
{
    return posix_fallocate(fd, off, len);
}

/* ---- syncs ---- */

static int synced(int fd, int rc)
{
    if (rc == 0 && recording() && fd >= 0 && fd < MAX_FDS) {
        pthread_mutex_lock(&lock);
        if (fds[fd].fid != 0)
            emit_simple(XT_SYNC, fds[fd].fid, 0, 0);
        else if (fds[fd].dir)
            emit_simple(XT_SYNC_ALL, 0, 0, 0);
        pthread_mutex_unlock(&lock);
    }
    return rc;
}

int fsync(int fd)
{
    load_fsync();
    return synced(fd, real_fsync(fd));
}

int fdatasync(int fd)
{
    load_fdatasync();
    return synced(fd, real_fdatasync(fd));
}

void sync(void)
{
    load_sync();
    real_sync();
    if (recording()) {
        pthread_mutex_lock(&lock);
        emit_simple(XT_SYNC_ALL, 0, 0, 0);
        pthread_mutex_unlock(&lock);
    }
}

int syncfs(int fd)
{
    load_syncfs();
    int rc = real_syncfs(fd);
    if (rc == 0 && recording()) {
        pthread_mutex_lock(&lock);
        emit_simple(XT_SYNC_ALL, 0, 0, 0);
        pthread_mutex_unlock(&lock);
    }
    return rc;
}

/* ---- mappings ---- */

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    load_mmap();
    void *p = real_mmap(addr, len, prot, flags, fd, off);
    if (p == MAP_FAILED || !tracked(fd) || !(flags & MAP_SHARED) ||
        !(prot & PROT_WRITE))
        return p;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_MAPS; i++) {
        if (maps[i].addr == NULL) {
            maps[i] = (struct map){p, len, fds[fd].fid, off};
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return p;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return mmap(addr, len, prot, flags, fd, off);
}

int munmap(void *addr, size_t len)
{
    load_munmap();
    if (recording()) {
        pthread_mutex_lock(&lock);
        for (int i = 0; i < MAX_MAPS; i++)
            if (maps[i].addr == addr && maps[i].len == len)
                maps[i].addr = NULL;
        pthread_mutex_unlock(&lock);
    }
    return real_munmap(addr, len);
}

int msync(void *addr, size_t len, int flags)
{
    load_msync();
    int rc = real_msync(addr, len, flags);
    if (rc != 0 || !recording() || !(flags & MS_SYNC))
        return rc;
    pthread_mutex_lock(&lock);
    char *lo = addr, *hi = lo + len;
    for (int i = 0; i < MAX_MAPS; i++) {
        struct map *m = &maps[i];
        if (m->addr == NULL || hi <= m->addr || lo >= m->addr + m->len)
            continue;
        char *a = lo > m->addr ? lo : m->addr;
        char *b = hi < m->addr + m->len ? hi : m->addr + m->len;
        uint64_t off = (uint64_t)m->off + (uint64_t)(a - m->addr);
        emit_data(m->fid, off, a, (size_t)(b - a));
        emit_simple(XT_SYNC, m->fid, 0, 0);
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

/* ---- names ---- */

static int renamed(int rc, int olddir, const char *from, int newdir,
                   const char *to)
{
    char a[PATH_MAX * 2], b[PATH_MAX * 2];
    const char *x = inside(olddir, from, a, sizeof a);
    const char *y = inside(newdir, to, b, sizeof b);
    if (rc == 0 && x != NULL && y != NULL)
        emit_name(XT_RENAME, 0, x, y);
    return rc;
}

int rename(const char *from, const char *to)
{
    load_rename();
    if (!recording())
        return real_rename(from, to);
    pthread_mutex_lock(&lock);
    int rc = real_rename(from, to), err = errno;
    renamed(rc, AT_FDCWD, from, AT_FDCWD, to);
    pthread_mutex_unlock(&lock);
    errno = err;
    return rc;
}

int renameat(int od, const char *from, int nd, const char *to)
{
    load_renameat();
    if (!recording())
        return real_renameat(od, from, nd, to);
    pthread_mutex_lock(&lock);
    int rc = real_renameat(od, from, nd, to), err = errno;
    renamed(rc, od, from, nd, to);
    pthread_mutex_unlock(&lock);
    errno = err;
    return rc;
}

int renameat2(int od, const char *from, int nd, const char *to,
              unsigned flags)
{
    load_renameat2();
    if (!recording())
        return real_renameat2(od, from, nd, to, flags);
    pthread_mutex_lock(&lock);
    int rc = real_renameat2(od, from, nd, to, flags), err = errno;
    renamed(rc, od, from, nd, to);
    pthread_mutex_unlock(&lock);
    errno = err;
    return rc;
}

static int unlinked(int rc, int dirfd, const char *path, uint32_t type)
{
    char buf[PATH_MAX * 2];
    const char *name = inside(dirfd, path, buf, sizeof buf);
    if (rc == 0 && name != NULL)
        emit_name(type, 0, name, NULL);
    return rc;
}

int unlink(const char *path)
{
    load_unlink();
    if (!recording())
        return real_unlink(path);
    pthread_mutex_lock(&lock);
    int rc = real_unlink(path), err = errno;
    unlinked(rc, AT_FDCWD, path, XT_UNLINK);
    pthread_mutex_unlock(&lock);
    errno = err;
    return rc;
}

int unlinkat(int dirfd, const char *path, int flags)
{
    load_unlinkat();
    if (!recording())
        return real_unlinkat(dirfd, path, flags);
    pthread_mutex_lock(&lock);
    int rc = real_unlinkat(dirfd, path, flags), err = errno;
    unlinked(rc, dirfd, path, XT_UNLINK);
    pthread_mutex_unlock(&lock);
    errno = err;
    return rc;
}

int mkdir(const char *path, mode_t mode)
{
    load_mkdir();
    if (!recording())
        return real_mkdir(path, mode);
    pthread_mutex_lock(&lock);
    int rc = real_mkdir(path, mode), err = errno;
    unlinked(rc, AT_FDCWD, path, XT_MKDIR);
    pthread_mutex_unlock(&lock);
    errno = err;
    return rc;
}

int mkdirat(int dirfd, const char *path, mode_t mode)
{
    load_mkdirat();
    if (!recording())
        return real_mkdirat(dirfd, path, mode);
    pthread_mutex_lock(&lock);
    int rc = real_mkdirat(dirfd, path, mode), err = errno;
    unlinked(rc, dirfd, path, XT_MKDIR);
    pthread_mutex_unlock(&lock);
    errno = err;
    return rc;
}

/* ---- the process's own marks ---- */

void xaclab_trace_mark(uint32_t mark, uint64_t arg)
{
    if (!recording())
        return;
    pthread_mutex_lock(&lock);
    struct xt_rec r = {XT_MARK, 0, arg, 0, mark};
    emit(&r, NULL, 0);
    pthread_mutex_unlock(&lock);
}
