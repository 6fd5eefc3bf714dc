/* xac_logfile.c: the log's files: names, headers, creation,
 * preallocation, descriptors and syncs (xac_logfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "xac.h"
#include "xac_assert.h"
#include "xac_atomic.h"
#include "xac_crc.h"
#include "xac_logfile.h"
#include "xac_os.h"

/* Log files grow by fallocate() in steps of this much, ahead of the
 * appends: the blocks are reserved (a full disk shows up here, not in a
 * record's write) and a commit's fdatasync does not also have to journal
 * a block allocation.  See docs/libxac-durability.md, "Log
 * preallocation". */
#define XLOG_ALLOC_STEP (4u << 20)
/* The fallocated blocks are "unwritten": a record written into one would
 * make its commit's sync journal the conversion.  So the blocks ahead of
 * the tail are written with zeros first, one chunk at a time, keeping the
 * zeros about XLOG_ZERO_AHEAD ahead of the tail.  A whole step written
 * and synced at once held up every commit queued behind it for 3-9 ms;
 * a chunk costs one commit a 64 KiB write into the page cache, and its
 * write-back, started at once, is long done when the tail reaches it. */
#define XLOG_ZERO_CHUNK (64u << 10)
#define XLOG_ZERO_AHEAD (1u << 20)

int xlf_sync(const struct xlog *lg, int fd)
{
    int rc = lg->lg_sync == XAC_SYNC_FSYNC ? xos.fsync(fd)
                                           : xos.fdatasync(fd);
    return rc != 0 ? (errno != 0 ? errno : EIO) : 0;
}

int xlf_path(const struct xlog *lg, char *buf, size_t n, uint32_t fno)
{
    return (size_t)snprintf(buf, n, "%s/xac.log.%010u", lg->lg_dir, fno) >= n
               ? ENAMETOOLONG
               : 0;
}

int xlf_open(const struct xlog *lg, uint32_t fno, int flags)
{
    char path[4096];
    int fd, rc = xlf_path(lg, path, sizeof path, fno);

    if (rc != 0)
        return -rc;
    fd = xos.open(path, flags, 0666);
    return fd < 0 ? -errno : fd;
}

int xlf_header_ok(struct xlog_fhdr fh, uint32_t fno)
{
    uint32_t crc = fh.fh_crc;

    fh.fh_crc = 0;
    return fh.fh_magic == XLOG_FMAGIC && fh.fh_version == XLOG_VERSION &&
           fh.fh_fileno == fno && xac_crc32c(0, &fh, sizeof fh) == crc;
}

int xlf_sync_dir(const struct xlog *lg)
{
    int fd = xos.open(lg->lg_dir, O_RDONLY | O_DIRECTORY, 0), rc;

    if (fd < 0)
        return errno;
    rc = xos.fsync(fd) != 0 ? errno : 0;
    xos.close(fd);
    return rc;
}

int xlf_reopen(const struct xlog *lg, uint32_t fno, int flags, int *fd,
               uint32_t *no)
{
    int rc;

    if (*fd >= 0 && *no == fno)
        return 0;
    if (*fd >= 0)
        xos.close(*fd);
    *fd = -1;
    rc = xlf_open(lg, fno, flags);
    if (rc < 0)
        return rc;
    *fd = rc;
    *no = fno;
    return 1;
}

int xlf_use(struct xlog *lg, uint32_t fno)
{
    int flags = O_RDWR | (lg->lg_sync == XAC_SYNC_DSYNC ? O_DSYNC : 0);
    int rc = xlf_reopen(lg, fno, flags, &lg->lg_fd, &lg->lg_fno);

    if (rc > 0)
        lg->lg_alloc = 0;
    return rc < 0 ? -rc : 0;
}

void xlf_mark_stable(struct xctl_hdr *h, uint64_t t, uint64_t s)
{
    /* Nothing past the tail can be stable. */
    XASSERT(t <= LD(&h->ch_log_tail));
    xac_store_max(&h->ch_log_synced, t);
    xac_store_max(&h->ch_log_dstamp, s);
}

/* Write zeros over [from, to) of log file lg_fno.  0, or -1 if a write
 * failed (zeros are an optimisation: the record's own write reports a
 * real error). */
static int zero_fill(const struct xlog *lg, uint64_t from, uint64_t to)
{
    static const char zeros[65536];
    size_t n;

    for (; from < to; from += n) {
        n = to - from < sizeof zeros ? (size_t)(to - from) : sizeof zeros;
        if (xos_write_all(lg->lg_fd, zeros, n, (off_t)from) != 0)
            return -1;
    }
    return 0;
}

/* Reserve blocks of log file lg_fno up to at least end, a step at a
 * time.  Where fallocate is unsupported or fails, appends extend the file
 * as before (and report any real ENOSPC themselves): lg_alloc becomes
 * UINT64_MAX. */
static void reserve(struct xlog *lg, uint64_t end)
{
    struct stat st;
    uint64_t want;

    if (end <= lg->lg_alloc)
        return;
    if (xos.fstat(lg->lg_fd, &st) == 0 && (uint64_t)st.st_size >= end) {
        lg->lg_alloc = (uint64_t)st.st_size; /* another process grew it */
        return;
    }
    want = (end + XLOG_ALLOC_STEP - 1) / XLOG_ALLOC_STEP * XLOG_ALLOC_STEP;
    if (want > lg->lg_limit + XLOG_ALLOC_STEP)
        want = end;
    if (xos.fallocate(lg->lg_fd, 0, 0, (off_t)want) != 0)
        want = UINT64_MAX; /* not here: plain appends */
    lg->lg_alloc = want;
}

void xlf_alloc(struct xlog *lg, uint64_t tail, uint64_t end)
{
    struct xctl_hdr *h = xlf_ch(lg);
    uint64_t file = tail & ~(uint64_t)0xffffffffu, zeroed = h->ch_log_zeroed;
    uint64_t from = tail & 0xffffffffu, to;

    /* Zeros already written in this file count from where they end; never
     * below the tail (records are there). */
    if ((zeroed & ~(uint64_t)0xffffffffu) == file &&
        (zeroed & 0xffffffffu) > from)
        from = zeroed & 0xffffffffu;
    if (from >= end + XLOG_ZERO_AHEAD)
        return;
    to = from + XLOG_ZERO_CHUNK > end ? from + XLOG_ZERO_CHUNK : end;
    to = (to + XLOG_ZERO_CHUNK - 1) / XLOG_ZERO_CHUNK * XLOG_ZERO_CHUNK;
    reserve(lg, to);
    if (lg->lg_alloc == UINT64_MAX)
        return;
    if (to > lg->lg_alloc)
        to = lg->lg_alloc;
    if (to <= from || zero_fill(lg, from, to) != 0)
        return;
    ST(&h->ch_log_zeroed, file | to);
    /* Start the zeros' write-back now, without waiting: a hint, and a
     * failure of it changes nothing (the next sync writes them). */
    (void)sync_file_range(lg->lg_fd, (off_t)from, (off_t)(to - from),
                          SYNC_FILE_RANGE_WRITE);
}

int xlf_create(const struct xlog *lg, uint32_t fno, uint64_t first)
{
    char buf[XLOG_FHDR];
    struct xlog_fhdr fh;
    int fd, rc;

    fd = xlf_open(lg, fno, O_RDWR | O_CREAT | O_TRUNC);
    if (fd < 0)
        return -fd;
    memset(&fh, 0, sizeof fh);
    fh.fh_magic = XLOG_FMAGIC;
    fh.fh_version = XLOG_VERSION;
    fh.fh_fileno = fno;
    fh.fh_psize = (uint32_t)lg->lg_psize;
    fh.fh_first_stamp = first;
    fh.fh_crc = xac_crc32c(0, &fh, sizeof fh);
    memset(buf, 0, sizeof buf);
    memcpy(buf, &fh, sizeof fh);
    rc = xos_write_all(fd, buf, sizeof buf, 0);
    if (rc == 0)
        rc = xlf_sync(lg, fd);
    xos.close(fd);
    if (rc == 0)
        rc = xlf_sync_dir(lg);
    return rc;
}

int xlf_read_header(const struct xlog *lg, uint32_t fno,
                    struct xlog_fhdr *fh)
{
    int fd = xlf_open(lg, fno, O_RDONLY), rc;

    if (fd < 0)
        return -fd;
    rc = xos_read_all(fd, fh, sizeof *fh, 0, 1);
    xos.close(fd);
    if (rc != 0)
        return rc;
    return xlf_header_ok(*fh, fno) ? 0 : EINVAL;
}
