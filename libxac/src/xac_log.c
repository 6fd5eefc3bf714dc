/* xac_log.c: the durable REDO log, group commit, checkpoints and
 * recovery (DURABLE mode).  docs/libxac-durability.md describes the design
 * and docs/libxac-formats.md the bytes on disk.
 *
 * - The log is a sequence of files "<dir>/xac.log.NNNNNNNNNN", each with a
 *   64-byte header, then records.  A record is self-describing: header
 *   {magic, length, LSN, commit stamp, transaction id, range count,
 *   CRC32C} then byte ranges {page, offset, length, bytes} of the pages it
 *   changed, diffed against the version the transaction started from.  The
 *   LSN is (file number << 32 | offset) and must equal the record's
 *   position, so stale bytes are never taken for a record; commit stamps
 *   are consecutive, so a gap ends the log.  Records of all processes go
 *   into the same file, appended under ch_lock in commit order: metadata
 *   and data of a commit are one record, never interleaved with another's
 *   (the flaw of the thesis's appendix B).
 * - Group commit: a committer appends under ch_lock and releases it; then
 *   one process at a time (the leader, ch_log_leader) syncs the log up to
 *   the tail it read and publishes ch_log_synced; the others sleep on the
 *   futex word ch_log_seq.  A dead leader is replaced after a timeout.
 * - WAL rule: a version is copied into the data file only once its record
 *   is stable (xmv_wb_limit).  The data file is therefore always a state
 *   reachable by replaying stable records.
 * - A checkpoint (two alternating slots in "<dir>/xac.ckpt") says: the
 *   data file holds every commit up to stamp S and has been synced; replay
 *   starts in log file F.
 * - Any failed log write or sync puts the log in the failed state
 *   (ch_log_failed): the transaction and every later one get XAC_EIO; no
 *   sync is retried as if the pages were clean (PostgreSQL "fsyncgate").
 *   Recovery, run by the next first process to map the file, clears it.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#include "xac.h"
#include "xac_assert.h"
#include "xac_config.h"
#include "xac_crc.h"
#include "xac_int.h"
#include "xac_os.h"

#define XLOG_FMAGIC 0x474F4C58u /* "XLOG" in a little-endian dump */
#define XLOG_RMAGIC 0x43455258u /* "XREC" */
#define XCKP_MAGIC 0x504B4358u  /* "XCKP" */
#define XLOG_VERSION 1u
#define XLOG_FHDR 64u           /* file header bytes */
/* Log files grow by fallocate() and a write of zeros in steps of this
 * much, ahead of the appends: a record then lands in written blocks, and
 * the fdatasync that makes it stable does not also have to journal a new
 * file size, a block allocation or an unwritten-extent conversion (see
 * docs/libxac-durability.md).  Recovery reads the zeros past the last
 * record as the end of the log. */
#define XLOG_ALLOC_STEP (4u << 20)
/* The alone commit writes its record's blocks from a buffer of this
 * size (xlog_append_stable); a longer record takes the buffered write and
 * fdatasync instead. */
#define XLOG_DIRECT_BUF (256u << 10)
#define XCKP_NAME "xac.ckpt"
#define XCKP_SLOT 512u

struct xlog_fhdr {
    uint32_t fh_magic;       /* XLOG_FMAGIC */
    uint32_t fh_version;     /* XLOG_VERSION */
    uint32_t fh_fileno;      /* this file's number */
    uint32_t fh_psize;       /* page size */
    uint64_t fh_first_stamp; /* every record here has a stamp >= this */
    uint32_t fh_pad;
    uint32_t fh_crc;         /* CRC32C of the bytes above (crc = 0) */
};

struct xlog_rec {
    uint32_t lr_magic;   /* XLOG_RMAGIC */
    uint32_t lr_len;     /* whole record, multiple of 8 */
    uint64_t lr_lsn;     /* file << 32 | offset of this record */
    uint64_t lr_stamp;   /* commit stamp (consecutive) */
    uint64_t lr_txn;     /* global transaction id */
    uint32_t lr_nranges; /* ranges that follow */
    uint32_t lr_crc;     /* CRC32C of the whole record with crc = 0 */
};

struct xlog_range {
    uint32_t rg_page;
    uint16_t rg_off;   /* byte offset in the page */
    uint16_t rg_lenm1; /* length - 1 */
};

struct xckpt {
    uint32_t ck_magic;   /* XCKP_MAGIC */
    uint32_t ck_version; /* XLOG_VERSION */
    uint64_t ck_seq;     /* the slot with the larger seq wins */
    uint64_t ck_stamp;   /* the data file holds every commit <= this */
    uint32_t ck_start;   /* replay starts in this log file */
    uint32_t ck_psize;
    char ck_path[472];   /* absolute path of the data file */
    uint32_t ck_pad;
    uint32_t ck_crc;     /* CRC32C of the slot with crc = 0 */
};

_Static_assert(sizeof(struct xlog_rec) == 40, "record header");
_Static_assert(sizeof(struct xlog_fhdr) <= XLOG_FHDR, "file header");
_Static_assert(sizeof(struct xckpt) == XCKP_SLOT, "checkpoint slot");

#define LD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define ST(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)

static struct xctl_hdr *ch(struct xac_env *e)
{
    return e->xe_ctl.cx_hdr;
}

static void store_max(uint64_t *p, uint64_t v)
{
    uint64_t cur = LD(p);
    while (cur < v && !__atomic_compare_exchange_n(p, &cur, v, 0,
                                                   __ATOMIC_SEQ_CST,
                                                   __ATOMIC_SEQ_CST))
        ;
}

static int do_sync(struct xac_env *e, int fd)
{
    int rc = e->xe_sync_method == XAC_SYNC_FSYNC ? xos.fsync(fd)
                                                 : xos.fdatasync(fd);
    return rc != 0 ? (errno != 0 ? errno : EIO) : 0;
}

static int log_path(struct xac_env *e, char *buf, size_t n, uint32_t fno)
{
    return (size_t)snprintf(buf, n, "%s/xac.log.%010u", e->xe_dir, fno) >= n
               ? ENAMETOOLONG
               : 0;
}

static int sync_dir(struct xac_env *e)
{
    int fd = xos.open(e->xe_dir, O_RDONLY | O_DIRECTORY, 0), rc;

    if (fd < 0)
        return errno;
    rc = xos.fsync(fd) != 0 ? errno : 0;
    xos.close(fd);
    return rc;
}

static int log_flags(struct xac_env *e)
{
    return O_RDWR | (e->xe_sync_method == XAC_SYNC_DSYNC ? O_DSYNC : 0);
}

/* Make *fd (now open on log file *no, or -1) a descriptor of log file
 * fno opened with flags.  1 if it was reopened, 0 if it already was one,
 * or -errno. */
static int reopen_log(struct xac_env *e, uint32_t fno, int flags, int *fd,
                      uint32_t *no)
{
    char path[4096];
    int rc;

    if (*fd >= 0 && *no == fno)
        return 0;
    if (*fd >= 0)
        xos.close(*fd);
    *fd = -1;
    rc = log_path(e, path, sizeof path, fno);
    if (rc != 0)
        return -rc;
    *fd = xos.open(path, flags, 0);
    if (*fd < 0)
        return -errno;
    *no = fno;
    return 1;
}

/* Make e->xe_logfd the descriptor of log file fno.  0 or errno. */
static int logfd_for(struct xac_env *e, uint32_t fno)
{
    int rc = reopen_log(e, fno, log_flags(e), &e->xe_logfd, &e->xe_logno);

    if (rc > 0)
        e->xe_log_alloc = 0;
    return rc < 0 ? -rc : 0;
}

/* Publish the log as stable up to LSN t, with s the newest stable commit
 * stamp (the marks only grow). */
static void mark_stable(struct xctl_hdr *h, uint64_t t, uint64_t s)
{
    store_max(&h->ch_log_synced, t);
    store_max(&h->ch_log_dstamp, s);
}

/* Write zeros over [from, to) of a freshly allocated log range.  Blocks
 * from fallocate are "unwritten": the first write into each would make
 * the commit's fdatasync journal the conversion.  Written once here, the
 * blocks are plain data, and a commit's fdatasync writes only its record
 * (as PostgreSQL's zero-filled WAL segments).  Best effort. */
static void zero_fill(int fd, uint64_t from, uint64_t to)
{
    static const char zeros[65536];
    size_t n;

    for (; from < to; from += n) {
        n = to - from < sizeof zeros ? (size_t)(to - from) : sizeof zeros;
        if (xos_write_all(fd, zeros, n, (off_t)from) != 0)
            return;
    }
}

/* Make sure log file xe_logno has blocks up to end.  Only an optimisation:
 * where fallocate is unsupported or fails, the append extends the file
 * as before (and reports any real ENOSPC itself).  0, or the errno value
 * of a failed sync (the caller fails the log). */
static int log_alloc(struct xac_env *e, uint64_t end)
{
    struct stat st;
    uint64_t want;

    if (end <= e->xe_log_alloc)
        return 0;
    if (e->xe_log_alloc == 0 && xos.fstat(e->xe_logfd, &st) == 0 &&
        (uint64_t)st.st_size >= end) {
        e->xe_log_alloc = (uint64_t)st.st_size; /* another process grew it */
        return 0;
    }
    want = (end + XLOG_ALLOC_STEP - 1) / XLOG_ALLOC_STEP * XLOG_ALLOC_STEP;
    if (want > e->xe_log_limit + XLOG_ALLOC_STEP)
        want = end;
    if (xos.fstat(e->xe_logfd, &st) != 0 ||
        xos.fallocate(e->xe_logfd, 0, 0, (off_t)want) != 0) {
        e->xe_log_alloc = UINT64_MAX; /* not here: plain appends */
        return 0;
    }
    e->xe_log_alloc = want;
    /* Past the old end there are no records (appends happen under
     * ch_lock, as this does).  The zeros are synced now, once per step:
     * left dirty, each direct record write into them would first wait
     * for the kernel to write back the cached zeros of its blocks, and
     * each commit's fdatasync would carry some of them.  A failed sync
     * may have dropped unsynced records too: the log fails. */
    zero_fill(e->xe_logfd, (uint64_t)st.st_size, want);
    return do_sync(e, e->xe_logfd);
}

/* Create log file fno (replacing a leftover), write its header and make
 * it and its directory entry stable. */
static int create_file(struct xac_env *e, uint32_t fno, uint64_t first)
{
    char path[4096], buf[XLOG_FHDR];
    struct xlog_fhdr fh;
    int fd, rc;

    rc = log_path(e, path, sizeof path, fno);
    if (rc != 0)
        return rc;
    fd = xos.open(path, O_RDWR | O_CREAT | O_TRUNC, 0666);
    if (fd < 0)
        return errno;
    memset(&fh, 0, sizeof fh);
    fh.fh_magic = XLOG_FMAGIC;
    fh.fh_version = XLOG_VERSION;
    fh.fh_fileno = fno;
    fh.fh_psize = (uint32_t)e->xe_psize;
    fh.fh_first_stamp = first;
    fh.fh_crc = xac_crc32c(0, &fh, sizeof fh);
    memset(buf, 0, sizeof buf);
    memcpy(buf, &fh, sizeof fh);
    rc = xos_write_all(fd, buf, sizeof buf, 0);
    if (rc == 0)
        rc = do_sync(e, fd);
    xos.close(fd);
    if (rc == 0)
        rc = sync_dir(e);
    return rc;
}

static int read_fhdr(struct xac_env *e, uint32_t fno, struct xlog_fhdr *fh)
{
    char path[4096];
    uint32_t crc;
    int fd, rc;

    rc = log_path(e, path, sizeof path, fno);
    if (rc != 0)
        return rc;
    fd = xos.open(path, O_RDONLY, 0);
    if (fd < 0)
        return errno;
    rc = xos_read_all(fd, fh, sizeof *fh, 0, 1);
    xos.close(fd);
    if (rc != 0)
        return rc;
    crc = fh->fh_crc;
    fh->fh_crc = 0;
    if (fh->fh_magic != XLOG_FMAGIC || fh->fh_version != XLOG_VERSION ||
        fh->fh_fileno != fno || xac_crc32c(0, fh, sizeof *fh) != crc)
        return EINVAL;
    return 0;
}

/* ---- setup ----------------------------------------------------------- */

int xlog_init(struct xac_env *e, const struct xcfg *cf)
{
    e->xe_durable = 1;
    e->xe_logfd = -1;
    e->xe_dfd = -1;
    e->xe_sync_method = (int)cf->cf_sync;
    e->xe_commit_delay_us = (unsigned)cf->cf_commit_delay_us;
    e->xe_log_limit = cf->cf_log_limit;
    e->xe_lead_by_cpu = (int)cf->cf_lead_by_cpu;
    /* 512-byte blocks first: direct_write moves to page-sized ones if the
     * file system wants them. */
    e->xe_dalign = cf->cf_log_direct ? 512 : 0;
    /* Best effort: without it, prepare reads every before-image back. */
    e->xe_before = xos.mmap(NULL, XAC_BEFORE_PAGES * e->xe_psize,
                            PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (e->xe_before == MAP_FAILED)
        e->xe_before = NULL;
    e->xe_nbefore = 0;
    return 0;
}

void xlog_close(struct xac_env *e)
{
    if (e->xe_logfd >= 0)
        xos.close(e->xe_logfd);
    e->xe_logfd = -1;
    if (e->xe_dfd >= 0)
        xos.close(e->xe_dfd);
    e->xe_dfd = -1;
    free(e->xe_dbuf);
    e->xe_dbuf = NULL;
    free(e->xe_logbuf);
    e->xe_logbuf = NULL;
    e->xe_logcap = e->xe_loglen = 0;
    if (e->xe_before != NULL)
        xos.munmap(e->xe_before, XAC_BEFORE_PAGES * e->xe_psize);
    e->xe_before = NULL;
    e->xe_nbefore = 0;
    e->xe_durable = 0;
}

int xSetSyncMethod(int method)
{
    struct xac_env *e = &xac_env;

    if (!e->xe_inited)
        return XAC_ENOTINIT;
    if (method < XAC_SYNC_FDATASYNC || method > XAC_SYNC_DSYNC)
        return XAC_EINVAL;
    if (e->xe_depth > 0)
        return XAC_EINTXN;
    if (e->xe_sync_method != method && e->xe_logfd >= 0) {
        xos.close(e->xe_logfd); /* reopened with the right flags */
        e->xe_logfd = -1;
    }
    e->xe_sync_method = method;
    return 0;
}

/* ---- failure state --------------------------------------------------- */

void xlog_fail(struct xac_env *e)
{
    ST(&ch(e)->ch_log_failed, 1);
    __atomic_add_fetch(&ch(e)->ch_log_seq, 1, __ATOMIC_SEQ_CST);
    xos.futex(&ch(e)->ch_log_seq, FUTEX_WAKE, INT_MAX, NULL);
}

int xlog_failed(struct xac_env *e)
{
    return e->xe_durable && ch(e) != NULL && LD(&ch(e)->ch_log_failed);
}

/* ---- building and appending records ---------------------------------- */

static int written(struct xac_env *e, uint32_t pg)
{
    return (e->xe_pstate[pg] & XP_LEVEL) == XP_WRITE;
}

static char *diff_page(char *p, uint32_t pg, const unsigned char *a,
                       const unsigned char *b, size_t psize, uint32_t *nr)
{
    size_t nw = psize / 8, i = 0, s, end, j, lo, hi;
    uint64_t x, y;
    struct xlog_range rg;

    while (i < nw) {
        memcpy(&x, a + 8 * i, 8);
        memcpy(&y, b + 8 * i, 8);
        if (x == y) {
            i++;
            continue;
        }
        s = i;
        end = i + 1;
        /* Extend while the gap of equal words is shorter than a range
         * header. */
        for (j = i + 1; j < nw && j - end < 2; j++) {
            memcpy(&x, a + 8 * j, 8);
            memcpy(&y, b + 8 * j, 8);
            if (x != y)
                end = j + 1;
        }
        lo = 8 * s;
        hi = 8 * end;
        while (a[lo] == b[lo])
            lo++;
        while (a[hi - 1] == b[hi - 1])
            hi--;
        rg.rg_page = pg;
        rg.rg_off = (uint16_t)lo;
        rg.rg_lenm1 = (uint16_t)(hi - lo - 1);
        memcpy(p, &rg, sizeof rg);
        p += sizeof rg;
        memcpy(p, b + lo, hi - lo);
        p += hi - lo;
        (*nr)++;
        i = end;
    }
    return p;
}

void xlog_keep_before(struct xac_env *e, uint32_t pg)
{
    if (e->xe_before == NULL || e->xe_nbefore >= XAC_BEFORE_PAGES)
        return;
    memcpy(e->xe_before + ((size_t)e->xe_nbefore << e->xe_pshift),
           e->xe_back + ((size_t)pg << e->xe_pshift), e->xe_psize);
    e->xe_bpage[e->xe_nbefore++] = pg;
}

/* The before-image of pg kept at its write grant, or NULL. */
static const char *kept_before(struct xac_env *e, uint32_t pg)
{
    unsigned i;

    for (i = 0; i < e->xe_nbefore; i++)
        if (e->xe_bpage[i] == pg)
            return e->xe_before + ((size_t)i << e->xe_pshift);
    return NULL;
}

int xlog_prepare(struct xac_env *e)
{
    size_t nw = 0, i, need;
    uint32_t pg, f, nr = 0;
    struct xlog_rec rh;
    const char *a;
    char *p;
    int rc;

    for (i = 0; i < e->xe_ntouched; i++)
        if (written(e, e->xe_touched[i]))
            nw++;
    need = sizeof rh + nw * (sizeof(struct xlog_range) + e->xe_psize) + 8;
    if (need > e->xe_logcap) {
        char *nb = realloc(e->xe_logbuf, need);
        if (nb == NULL)
            return ENOMEM;
        e->xe_logbuf = nb;
        e->xe_logcap = need;
    }
    p = e->xe_logbuf + sizeof rh;
    for (i = 0; i < e->xe_ntouched; i++) {
        pg = e->xe_touched[i];
        if (!written(e, pg))
            continue;
        /* The before-image: the version our snapshot read.  If another
         * commit replaced it meanwhile, validation fails anyway. */
        a = kept_before(e, pg);
        if (a == NULL) {
            f = xmv_find(e, pg, e->xe_snap);
            rc = f != 0 ? xos_read_all(e->xe_poolfd, e->xe_buf, e->xe_psize,
                                       (off_t)f << e->xe_pshift, 1)
                        : xos_read_all(e->xe_fd, e->xe_buf, e->xe_psize,
                                       (off_t)pg << e->xe_pshift, 1);
            if (rc != 0)
                return rc;
            a = e->xe_buf;
        }
        p = diff_page(p, pg, (const unsigned char *)a,
                      (unsigned char *)e->xe_back +
                          ((size_t)pg << e->xe_pshift),
                      e->xe_psize, &nr);
    }
    while (((size_t)(p - e->xe_logbuf) & 7) != 0)
        *p++ = 0;
    memset(&rh, 0, sizeof rh);
    rh.lr_magic = XLOG_RMAGIC;
    rh.lr_len = (uint32_t)(p - e->xe_logbuf);
    rh.lr_nranges = nr;
    memcpy(e->xe_logbuf, &rh, sizeof rh);
    e->xe_loglen = (size_t)(p - e->xe_logbuf);
    return 0;
}

/* Start log file fno + 1 (under ch_lock): the current one is synced
 * first, so a record in a later file implies every earlier one is stable. */
static int rotate(struct xac_env *e, uint64_t c)
{
    struct xctl_hdr *h = ch(e);
    uint64_t tail = h->ch_log_tail;
    uint32_t fno = (uint32_t)(tail >> 32);
    int rc;

    rc = logfd_for(e, fno);
    if (rc == 0 && e->xe_sync_method != XAC_SYNC_DSYNC)
        rc = do_sync(e, e->xe_logfd);
    if (rc == 0)
        rc = create_file(e, fno + 1, c);
    if (rc != 0)
        return rc;
    mark_stable(h, tail, h->ch_log_tail_stamp);
    ST(&h->ch_log_tail, ((uint64_t)(fno + 1) << 32) | XLOG_FHDR);
    return 0;
}

/* Under ch_lock: start the next log file if this one is full, open the
 * tail's file, allocate blocks, and seal the prepared record for position
 * *tailp with stamp c (LSN, stamp, transaction, CRC32C).  0 or an errno
 * value. */
static int place(struct xac_env *e, uint64_t c, uint64_t *tailp)
{
    struct xctl_hdr *h = ch(e);
    struct xlog_rec rh;
    uint64_t tail, off;
    size_t len = e->xe_loglen;
    int rc;

    tail = h->ch_log_tail;
    off = tail & 0xffffffffu;
    if (off + len > e->xe_log_limit && off > XLOG_FHDR) {
        rc = rotate(e, c);
        if (rc != 0)
            return rc;
        tail = h->ch_log_tail;
        off = tail & 0xffffffffu;
    }
    rc = logfd_for(e, (uint32_t)(tail >> 32));
    if (rc == 0)
        rc = log_alloc(e, off + len);
    if (rc != 0)
        return rc;
    memcpy(&rh, e->xe_logbuf, sizeof rh);
    rh.lr_lsn = tail;
    rh.lr_stamp = c;
    rh.lr_txn = e->xe_txn;
    rh.lr_crc = 0;
    memcpy(e->xe_logbuf, &rh, sizeof rh);
    rh.lr_crc = xac_crc32c(0, e->xe_logbuf, len);
    memcpy(e->xe_logbuf, &rh, sizeof rh);
    *tailp = tail;
    return 0;
}

/* Under ch_lock, the record at tail written: make it the log's tail. */
static void publish(struct xac_env *e, uint64_t tail, uint64_t c)
{
    struct xctl_hdr *h = ch(e);
    struct xlog_rec rh;
    size_t len = e->xe_loglen;

    memcpy(&rh, e->xe_logbuf, sizeof rh);
    /* prev, then stamp, then tail: a process that dies in between leaves
     * tail_stamp > ch_commits, which xctl_lock's repair turns into the
     * failed state (the record may be in the log but was not published). */
    ST(&h->ch_log_prev, tail);
    ST(&h->ch_log_tail_stamp, c);
    ST(&h->ch_log_tail, tail + len);
    h->ch_log_bytes += len;
    h->ch_log_records++;
    h->ch_log_payload += len - sizeof rh - rh.lr_nranges * sizeof(struct xlog_range);
    e->xe_mybytes += len;
    e->xe_logend = tail + len;
    if (e->xe_sync_method == XAC_SYNC_DSYNC)
        /* O_DSYNC: the write was synchronous, and so were all before. */
        mark_stable(h, tail + len, c);
}

/* Write the sealed record at tail through the buffered descriptor. */
static int write_record(struct xac_env *e, uint64_t tail)
{
    return xos_write_all(e->xe_logfd, e->xe_logbuf, e->xe_loglen,
                         (off_t)(tail & 0xffffffffu));
}

int xlog_append(struct xac_env *e, uint64_t c)
{
    uint64_t tail;
    int rc;

    if (LD(&ch(e)->ch_log_failed))
        return XAC_EIO;
    rc = place(e, c, &tail);
    if (rc == 0)
        rc = write_record(e, tail);
    if (rc != 0) {
        xlog_fail(e);
        return rc;
    }
    publish(e, tail, c);
    return 0;
}

/* ---- the alone commit's direct write --------------------------------- */

/* Make e->xe_dfd log file fno opened O_DIRECT | O_DSYNC.  0 or -errno. */
static int dfd_for(struct xac_env *e, uint32_t fno)
{
    int rc = reopen_log(e, fno, O_WRONLY | O_DIRECT | O_DSYNC, &e->xe_dfd,
                        &e->xe_dfdno);

    if (rc > 0)
        e->xe_dtail = 0; /* the kept block head was another file's */
    return rc < 0 ? rc : 0;
}

/* Write the sealed record at tail as whole blocks through xe_dfd: the
 * bytes of its first block before it (kept from the previous direct
 * write, else read back), the record, zeros to the block's end (the log
 * past its tail is zeros).  With O_DSYNC the write returns once the
 * blocks are stable: one request and one cache flush, where a buffered
 * write and fdatasync also pass the page cache and its writeback.  -1:
 * not applicable here (XAC_SYNC=fsync, which also wants the metadata,
 * among others: the caller writes and syncs as before); 0: the record is
 * stable; else an errno value. */
static int direct_write(struct xac_env *e, uint64_t tail)
{
    uint64_t off = tail & 0xffffffffu, base, head, span, end, keep;
    size_t len = e->xe_loglen;
    int rc;

    /* The write makes its own blocks stable, not the file: every byte
     * before the record must be stable already (it is after an alone
     * commit, not after a rotation or a pool commit whose wait is still
     * in progress). */
    if (e->xe_dalign == 0 || e->xe_sync_method == XAC_SYNC_FSYNC ||
        LD(&ch(e)->ch_log_synced) < tail)
        return -1;
    if (e->xe_dbuf == NULL &&
        posix_memalign((void **)&e->xe_dbuf, e->xe_psize, XLOG_DIRECT_BUF) != 0) {
        e->xe_dbuf = NULL;
        return -1;
    }
    if (dfd_for(e, (uint32_t)(tail >> 32)) != 0) {
        e->xe_dalign = 0; /* O_DIRECT refused (EINVAL): as before */
        return -1;
    }
again:
    base = off & ~(uint64_t)(e->xe_dalign - 1);
    head = off - base;
    span = (head + len + e->xe_dalign - 1) & ~(uint64_t)(e->xe_dalign - 1);
    if (span > XLOG_DIRECT_BUF)
        return -1;
    if (head > 0 && e->xe_dtail != tail) {
        rc = xos_read_all(e->xe_logfd, e->xe_dbuf, head, (off_t)base, 1);
        if (rc != 0)
            return -1; /* the buffered path reports its own errors */
    }
    memcpy(e->xe_dbuf + head, e->xe_logbuf, len);
    memset(e->xe_dbuf + head + len, 0, span - head - len);
    rc = xos_write_all(e->xe_dfd, e->xe_dbuf, span, (off_t)base);
    if (rc == EINVAL) {
        /* Misaligned for this file system: nothing was written.  Try
         * page-sized blocks, then give up on the direct write. */
        e->xe_dtail = 0;
        if (e->xe_dalign < e->xe_psize) {
            e->xe_dalign = (unsigned)e->xe_psize;
            goto again;
        }
        e->xe_dalign = 0;
        return -1;
    }
    if (rc != 0)
        return rc; /* the log fails */
    /* Keep the head of the block the next record starts in. */
    end = off + len;
    keep = end & (e->xe_dalign - 1);
    memmove(e->xe_dbuf, e->xe_dbuf + (end - keep - base), keep);
    e->xe_dtail = tail + len;
    return 0;
}

int xlog_append_stable(struct xac_env *e, uint64_t c)
{
    struct xctl_hdr *h = ch(e);
    uint64_t tail;
    int rc, direct = 0;

    if (LD(&h->ch_log_failed))
        return XAC_EIO;
    rc = place(e, c, &tail);
    if (rc == 0) {
        rc = direct_write(e, tail);
        direct = rc >= 0;
        if (rc < 0)
            rc = write_record(e, tail);
    }
    if (rc != 0) {
        xlog_fail(e);
        return XAC_EIO;
    }
    publish(e, tail, c);
    if (!direct)
        return xlog_sync_locked(e);
    mark_stable(h, tail + e->xe_loglen, c);
    __atomic_add_fetch(&h->ch_log_syncs, 1, __ATOMIC_SEQ_CST);
    e->xe_dwrites++;
    return 0;
}

/* ---- group commit ---------------------------------------------------- */

/* Sync the log file holding LSN t, then publish t as stable and s as the
 * newest stable commit stamp.  0 or XAC_EIO (the log is then failed). */
static int sync_to(struct xac_env *e, uint64_t t, uint64_t s)
{
    struct xctl_hdr *h = ch(e);
    int rc;

    if (t <= LD(&h->ch_log_synced))
        return 0;
    rc = logfd_for(e, (uint32_t)(t >> 32));
    if (rc == 0)
        rc = do_sync(e, e->xe_logfd);
    if (rc != 0) {
        xlog_fail(e);
        return XAC_EIO;
    }
    if (LD(&h->ch_log_failed))
        return XAC_EIO;
    mark_stable(h, t, s);
    __atomic_add_fetch(&h->ch_log_syncs, 1, __ATOMIC_SEQ_CST);
    return 0;
}

/* As the leader: sync the log up to the tail. */
static int lead(struct xac_env *e)
{
    struct xctl_hdr *h = ch(e);
    uint64_t t, s;

    xctl_lock(&e->xe_ctl);
    t = h->ch_log_tail;
    s = h->ch_log_tail_stamp;
    xctl_unlock(&e->xe_ctl);
    return sync_to(e, t, s);
}

/* Another process leading at the same time does no harm: each sync
 * covers every write before it, and the stable marks only grow. */
int xlog_sync_locked(struct xac_env *e)
{
    struct xctl_hdr *h = ch(e);

    return sync_to(e, h->ch_log_tail, h->ch_log_tail_stamp);
}

/* Has process pid died (gone, or a zombie its parent has not reaped)? */
static int proc_dead(pid_t pid)
{
    char path[64], buf[512], *p;
    ssize_t n;
    int fd;

    if (xos.kill(pid, 0) != 0 && errno == ESRCH)
        return 1;
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    fd = xos.open(path, O_RDONLY, 0);
    if (fd < 0)
        return 0;
    n = xos.pread(fd, buf, sizeof buf - 1, 0);
    xos.close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    p = strrchr(buf, ')');
    return p != NULL && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

static int wait_stable(struct xac_env *e, uint64_t end);

static uint64_t now_us(void)
{
    struct timespec ts;
    xos.clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* As the new leader: if other processes are inside transactions whose
 * commits the log does not hold yet, give them up to xe_commit_delay_us to
 * append, so that one sync covers them too (PostgreSQL's commit_delay with
 * commit_siblings).  A sibling waiting for a record the next sync covers
 * is ready; one still running, or one the last sync already covered and
 * that is about to start its next transaction, is not.  Alone: no delay. */
static void gather(struct xac_env *e)
{
    struct xctl_hdr *h = ch(e);
    struct xctl_slot *s = xctl_slots(&e->xe_ctl);
    uint32_t i, hwm, pending;
    uint64_t t0 = 0, synced;

    if (e->xe_commit_delay_us == 0)
        return;
    for (;;) {
        hwm = LD(&h->ch_slot_hwm);
        synced = LD(&h->ch_log_synced);
        pending = 0;
        for (i = 0; i < hwm; i++)
            if (i != e->xe_ctl.cx_slot && LD(&s[i].cs_txn) != 0 &&
                LD(&s[i].cs_wait_end) <= synced)
                pending++;
        if (pending == 0)
            return;
        if (t0 == 0)
            t0 = now_us();
        else if (now_us() - t0 >= e->xe_commit_delay_us)
            return;
        xos.sched_yield();
    }
}

/* ---- where the leader runs ------------------------------------------ */

/* 1 + the CPU we run on; 0 if unknown or past the table. */
static uint32_t cpu_now(void)
{
    int c = xos.getcpu();

    return c >= 0 && (unsigned)c < XCTL_CPUS ? (uint32_t)c + 1 : 0;
}

/* A leader that ran on cpu (1-based) synced in us microseconds: fold it
 * into that CPU's moving average (weight 1/8).  Two leaders racing here
 * lose a sample, no more. */
static void note_sync_us(struct xac_env *e, uint32_t cpu, uint64_t us)
{
    uint32_t *a = &ch(e)->ch_cpu_sync_us[cpu - 1], old = LD(a);

    if (us == 0)
        us = 1;
    if (us > 1000000)
        us = 1000000;
    ST(a, old == 0 ? (uint32_t)us : (uint32_t)((7 * (uint64_t)old + us) / 8));
}

/* Should this waiter leave the lead to a sibling whose CPU's syncs
 * complete sooner?  The sync's latency includes waking the leader when the
 * disk's interrupts arrive: on a machine where one CPU takes them all (a
 * VM's single-queue virtio disk), a leader on another CPU is woken by an
 * inter-processor interrupt, twice per sync (the write, then the cache
 * flush), and its syncs take 40 % longer (docs/libxac-durability.md).  A
 * sibling counts if it runs a transaction or waits for a record the last
 * sync did not cover: either is about to wait and will take the lead.
 * As leader we would wait up to the commit delay for a running sibling
 * anyway (gather), and waiting longer than that plus the difference in
 * latency cannot pay: *since (when we began to wait so; 0 before) bounds
 * it.  Averages come from the CPUs leaders actually use; a CPU avoided
 * is measured again once its average undercuts the others'. */
static int lead_elsewhere(struct xac_env *e, uint64_t *since)
{
    struct xctl_hdr *h = ch(e);
    struct xctl_slot *s = xctl_slots(&e->xe_ctl);
    uint32_t i, hwm, c, mine, lat, best, cpu;
    uint64_t synced, now;

    if (!e->xe_lead_by_cpu || (cpu = cpu_now()) == 0)
        return 0;
    mine = LD(&h->ch_cpu_sync_us[cpu - 1]);
    if (mine == 0)
        return 0; /* not measured: leading measures it */
    best = mine;
    hwm = LD(&h->ch_slot_hwm);
    synced = LD(&h->ch_log_synced);
    for (i = 0; i < hwm; i++) {
        if (i == e->xe_ctl.cx_slot ||
            (LD(&s[i].cs_txn) == 0 && LD(&s[i].cs_wait_end) <= synced))
            continue;
        c = LD(&s[i].cs_cpu);
        if (c == 0 || c == cpu || c > XCTL_CPUS)
            continue;
        lat = LD(&h->ch_cpu_sync_us[c - 1]);
        if (lat != 0 && lat < best)
            best = lat;
    }
    if ((uint64_t)best * 10 > (uint64_t)mine * 9)
        return 0; /* under 10 % faster: within the averages' noise */
    now = now_us();
    if (*since == 0) {
        *since = now;
        e->xe_deferred++;
    }
    return now - *since < (uint64_t)e->xe_commit_delay_us + (mine - best);
}

void xlog_note_cpu(struct xac_env *e)
{
    if (e->xe_lead_by_cpu)
        ST(&xctl_slots(&e->xe_ctl)[e->xe_ctl.cx_slot].cs_cpu, cpu_now());
}

int xlog_wait(struct xac_env *e, uint64_t end)
{
    struct xctl_slot *me = &xctl_slots(&e->xe_ctl)[e->xe_ctl.cx_slot];
    int rc;

    xlog_note_cpu(e);
    ST(&me->cs_wait_end, end);
    rc = wait_stable(e, end);
    ST(&me->cs_wait_end, 0);
    return rc;
}

/* While another process syncs for us, yield the CPU in a loop for about
 * as long as the last sync took before sleeping on the futex: waking from
 * the futex costs tens of microseconds on a VM, and a waiter that sees its
 * record stable at once starts its next transaction in time to share the
 * next sync.  Returns 1 once the record is stable. */
static int spin_stable(struct xac_env *e, uint64_t end)
{
    struct xctl_hdr *h = ch(e);
    uint64_t t0 = now_us(), lim = 2u * (uint64_t)LD(&h->ch_log_sync_us);

    if (lim > 2000)
        lim = 2000;
    while (now_us() - t0 < lim) {
        if (LD(&h->ch_log_synced) >= end)
            return 1;
        if (LD(&h->ch_log_failed) || LD(&h->ch_log_leader) == 0)
            return 0;
        xos.sched_yield();
    }
    return 0;
}

static int wait_stable(struct xac_env *e, uint64_t end)
{
    struct xctl_hdr *h = ch(e);
    uint32_t me = (uint32_t)xos.getpid(), seq, l;
    struct timespec ts = {0, 2000000};
    uint64_t t0, syncs, since = 0;
    uint32_t cpu;

    for (;;) {
        if (LD(&h->ch_log_synced) >= end)
            return 0;
        if (LD(&h->ch_log_failed))
            return XAC_EIO;
        seq = LD(&h->ch_log_seq);
        if (LD(&h->ch_log_leader) == 0 && lead_elsewhere(e, &since)) {
            xos.sched_yield();
            continue;
        }
        l = 0;
        if (__atomic_compare_exchange_n(&h->ch_log_leader, &l, me, 0,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
            gather(e);
            cpu = cpu_now();
            syncs = LD(&h->ch_log_syncs);
            t0 = now_us();
            lead(e);
            t0 = now_us() - t0;
            if (LD(&h->ch_log_syncs) != syncs) {
                /* It synced (sync_to skips a log already stable). */
                ST(&h->ch_log_sync_us, (uint32_t)t0);
                e->xe_leads++;
                if (cpu != 0 && cpu_now() == cpu)
                    note_sync_us(e, cpu, t0);
            }
            ST(&h->ch_log_leader, 0);
            __atomic_add_fetch(&h->ch_log_seq, 1, __ATOMIC_SEQ_CST);
            xos.futex(&h->ch_log_seq, FUTEX_WAKE, INT_MAX, NULL);
            continue;
        }
        if (spin_stable(e, end))
            return 0;
        if (LD(&h->ch_log_synced) >= end)
            return 0;
        if (xos.futex(&h->ch_log_seq, FUTEX_WAIT, seq, &ts) != 0 &&
            errno == ETIMEDOUT) {
            /* Is the leader still alive? */
            l = LD(&h->ch_log_leader);
            if (l != 0 && l != me && proc_dead((pid_t)l))
                __atomic_compare_exchange_n(&h->ch_log_leader, &l, 0, 0,
                                            __ATOMIC_SEQ_CST,
                                            __ATOMIC_SEQ_CST);
        }
    }
}

int xlog_sync_all(struct xac_env *e)
{
    if (!e->xe_durable || !LD(&ch(e)->ch_log_ready))
        return 0;
    return xlog_wait(e, LD(&ch(e)->ch_log_tail));
}

/* ---- checkpoints ----------------------------------------------------- */

static int ckpt_open(struct xac_env *e)
{
    char path[4096];
    int fd;

    if ((size_t)snprintf(path, sizeof path, "%s/%s", e->xe_dir, XCKP_NAME) >=
        sizeof path)
        return -ENAMETOOLONG;
    fd = xos.open(path, O_RDWR | O_CREAT, 0666);
    return fd < 0 ? -errno : fd;
}

/* The newest valid checkpoint slot, or 0 if there is none. */
static int ckpt_read(struct xac_env *e, int fd, struct xckpt *best)
{
    struct xckpt ck;
    uint32_t crc;
    int i, found = 0;

    for (i = 0; i < 2; i++) {
        if (xos_read_all(fd, &ck, sizeof ck, (off_t)i * XCKP_SLOT, 1) != 0)
            continue;
        crc = ck.ck_crc;
        ck.ck_crc = 0;
        if (ck.ck_magic != XCKP_MAGIC || ck.ck_version != XLOG_VERSION ||
            ck.ck_psize != e->xe_psize || xac_crc32c(0, &ck, sizeof ck) != crc)
            continue;
        ck.ck_path[sizeof ck.ck_path - 1] = '\0';
        if (!found || ck.ck_seq > best->ck_seq)
            *best = ck;
        found = 1;
    }
    return found;
}

/* The log file holding the record with stamp s + 1 (or where it will
 * go): walk back from the tail's file over the file headers. */
static uint32_t start_file(struct xac_env *e, uint64_t s, uint32_t lo)
{
    uint32_t fno = (uint32_t)(LD(&ch(e)->ch_log_tail) >> 32);
    struct xlog_fhdr fh;

    while (fno > lo) {
        if (read_fhdr(e, fno, &fh) != 0)
            return fno;
        if (fh.fh_first_stamp <= s + 1)
            return fno;
        fno--;
    }
    return fno;
}

static int ckpt_write(struct xac_env *e, uint64_t s, const char *path)
{
    struct xckpt ck, old;
    int fd, rc, have;
    char *abs = NULL;

    fd = ckpt_open(e);
    if (fd < 0)
        return -fd;
    xos.flock(fd, LOCK_EX);
    have = ckpt_read(e, fd, &old);
    memset(&ck, 0, sizeof ck);
    ck.ck_magic = XCKP_MAGIC;
    ck.ck_version = XLOG_VERSION;
    ck.ck_seq = have ? old.ck_seq + 1 : 1;
    ck.ck_stamp = s;
    ck.ck_start = start_file(e, s, have ? old.ck_start : 1);
    if (have && ck.ck_start < old.ck_start)
        ck.ck_start = old.ck_start;
    ck.ck_psize = (uint32_t)e->xe_psize;
    if (path != NULL)
        abs = realpath(path, NULL);
    if (abs != NULL && strlen(abs) < sizeof ck.ck_path)
        memcpy(ck.ck_path, abs, strlen(abs) + 1);
    else if (have)
        memcpy(ck.ck_path, old.ck_path, sizeof ck.ck_path);
    free(abs);
    ck.ck_crc = xac_crc32c(0, &ck, sizeof ck);
    rc = xos_write_all(fd, &ck, sizeof ck,
                       (off_t)(ck.ck_seq & 1) * XCKP_SLOT);
    if (rc == 0)
        rc = do_sync(e, fd);
    if (rc == 0) {
        ST(&ch(e)->ch_ckpt_seq, ck.ck_seq);
        if (!have)
            rc = sync_dir(e);
    }
    xos.flock(fd, LOCK_UN);
    xos.close(fd);
    if (rc != 0)
        xlog_fail(e);
    return rc;
}

int xlog_write_checkpoint(struct xac_env *e, uint64_t s)
{
    return ckpt_write(e, s, e->xe_name);
}

/* ---- recovery -------------------------------------------------------- */

/* Replay the records of one log file with stamps after *last.  Returns
 * the offset where valid records end in *end, and whether the file ends
 * there (*clean). */
static int replay_file(struct xac_env *e, int datafd, uint32_t fno,
                       uint64_t *last, uint64_t *end, int *clean,
                       uint64_t *applied)
{
    char path[4096];
    struct stat st;
    struct xlog_fhdr fh;
    struct xlog_rec rh;
    struct xlog_range rg;
    char *buf = NULL, *p;
    uint64_t off, n, n2;
    uint32_t crc, i;
    int fd, rc;

    *end = 0;
    *clean = 0;
    rc = log_path(e, path, sizeof path, fno);
    if (rc != 0)
        return rc;
    fd = xos.open(path, O_RDONLY, 0);
    if (fd < 0)
        return errno;
    if (xos.fstat(fd, &st) != 0) {
        rc = errno;
        goto out;
    }
    n = (uint64_t)st.st_size;
    buf = malloc(n ? n : 1);
    if (buf == NULL) {
        rc = ENOMEM;
        goto out;
    }
    rc = xos_read_all(fd, buf, n, 0, 1);
    if (rc != 0)
        goto out;
    if (n < XLOG_FHDR)
        goto out; /* no header: nothing here, end = 0 */
    memcpy(&fh, buf, sizeof fh);
    crc = fh.fh_crc;
    fh.fh_crc = 0;
    if (fh.fh_magic != XLOG_FMAGIC || fh.fh_version != XLOG_VERSION ||
        fh.fh_fileno != fno || fh.fh_psize != e->xe_psize ||
        xac_crc32c(0, &fh, sizeof fh) != crc)
        goto out;
    off = XLOG_FHDR;
    while (off + sizeof rh <= n) {
        memcpy(&rh, buf + off, sizeof rh);
        if (rh.lr_magic != XLOG_RMAGIC || rh.lr_len < sizeof rh ||
            (rh.lr_len & 7) != 0 || rh.lr_len > n - off ||
            rh.lr_lsn != (((uint64_t)fno << 32) | off))
            break;
        crc = rh.lr_crc;
        memset(buf + off + offsetof(struct xlog_rec, lr_crc), 0, 4);
        if (xac_crc32c(0, buf + off, rh.lr_len) != crc)
            break;
        if (rh.lr_stamp > *last + 1)
            break; /* a gap: not the continuation of the log */
        if (rh.lr_stamp == *last + 1) {
            p = buf + off + sizeof rh;
            for (i = 0; i < rh.lr_nranges; i++) {
                memcpy(&rg, p, sizeof rg);
                p += sizeof rg;
                if ((size_t)rg.rg_off + rg.rg_lenm1 + 1 > e->xe_psize ||
                    p + rg.rg_lenm1 + 1 > buf + off + rh.lr_len) {
                    rc = EINVAL; /* a valid CRC over a malformed record */
                    goto out;
                }
                rc = datafd < 0 ? 0
                                : xos_write_all(datafd, p,
                                                (size_t)rg.rg_lenm1 + 1,
                                                ((off_t)rg.rg_page
                                                 << e->xe_pshift) +
                                                rg.rg_off);
                if (rc != 0)
                    goto out;
                p += rg.rg_lenm1 + 1;
            }
            *last = rh.lr_stamp;
            (*applied)++;
        }
        off += rh.lr_len;
    }
    *end = off;
    /* Clean: the file ends here, or only the zeros of preallocated space
     * follow (a torn record leaves non-zero bytes). */
    *clean = 1;
    for (n2 = off; n2 < n && *clean; n2++)
        *clean = buf[n2] == 0;
out:
    free(buf);
    xos.close(fd);
    return rc;
}

int xlog_recover(struct xac_env *e, int datafd, const char *path)
{
    struct xctl_hdr *h = ch(e);
    struct xckpt ck;
    uint64_t last, end = 0, applied = 0, tail;
    uint32_t fno, lastf = 0, start;
    int fd, rc, clean = 0, have;

    fd = ckpt_open(e);
    if (fd < 0)
        return -fd;
    have = ckpt_read(e, fd, &ck);
    xos.close(fd);
    if (have && ck.ck_path[0] != '\0' && path != NULL && datafd >= 0) {
        /* The log belongs to another data file: bring that one up to
         * date first, so its records are never replayed into this one. */
        char *abs = realpath(path, NULL);
        int other = abs == NULL || strcmp(abs, ck.ck_path) != 0;
        free(abs);
        if (other) {
            /* (If it is gone, its records are only skipped.) */
            int ofd = xos.open(ck.ck_path, O_RDWR, 0);
            rc = xlog_recover(e, ofd, ck.ck_path);
            if (ofd >= 0)
                xos.close(ofd);
            if (rc != 0)
                return rc;
            fd = ckpt_open(e);
            if (fd < 0)
                return -fd;
            have = ckpt_read(e, fd, &ck);
            xos.close(fd);
        }
    }
    last = have ? ck.ck_stamp : 0;
    start = have ? ck.ck_start : 1;
    for (fno = start;; fno++) {
        int c2;
        uint64_t e2;
        rc = replay_file(e, datafd, fno, &last, &e2, &c2, &applied);
        if (rc == ENOENT)
            break;
        if (rc != 0)
            return rc;
        lastf = fno;
        end = e2;
        clean = c2;
    }
    if (datafd >= 0 && xos.fdatasync(datafd) != 0)
        return errno;
    if (lastf != 0 && clean && end >= XLOG_FHDR) {
        /* Go on appending to the last file; make what is there stable
         * first, or later records could follow vanished ones. */
        if (logfd_for(e, lastf) != 0 || do_sync(e, e->xe_logfd) != 0)
            return errno ? errno : EIO;
        tail = ((uint64_t)lastf << 32) | end;
    } else {
        /* A torn or missing end: start a new file, never write behind
         * garbage. */
        fno = (lastf > start ? lastf : start) + (lastf != 0 ? 1 : 0);
        rc = create_file(e, fno, last + 1);
        if (rc != 0)
            return rc;
        tail = ((uint64_t)fno << 32) | XLOG_FHDR;
    }
    xctl_lock(&e->xe_ctl);
    ST(&h->ch_log_tail, tail);
    ST(&h->ch_log_prev, tail);
    ST(&h->ch_log_tail_stamp, last);
    ST(&h->ch_log_synced, tail);
    ST(&h->ch_log_dstamp, last);
    ST(&h->ch_log_leader, 0);
    ST(&h->ch_log_failed, 0);
    ST(&h->ch_commits, last);
    ST(&h->ch_log_ready, 1);
    h->ch_log_recovered++;
    xctl_unlock(&e->xe_ctl);
    return ckpt_write(e, last, path);
}

int xRecover(const char *name)
{
    struct xac_env *e = &xac_env;
    struct xctl_slot *s;
    uint32_t i, hwm;
    int fd, rc, others = 0;

    if (!e->xe_inited)
        return XAC_ENOTINIT;
    if (!e->xe_durable)
        return XAC_EINVAL;
    if (name == NULL)
        return XAC_EINVAL;
    if (e->xe_base != NULL)
        return XAC_EMAPPED;
    xos.flock(e->xe_ctl.cx_fd, LOCK_EX);
    xctl_lock(&e->xe_ctl);
    xctl_reap(&e->xe_ctl);
    s = xctl_slots(&e->xe_ctl);
    hwm = ch(e)->ch_slot_hwm;
    for (i = 0; i < hwm; i++)
        if (i != e->xe_ctl.cx_slot && s[i].cs_state == XS_LIVE &&
            s[i].cs_mapped)
            others++;
    xctl_unlock(&e->xe_ctl);
    if (others > 0) {
        xos.flock(e->xe_ctl.cx_fd, LOCK_UN);
        return XAC_EMAPPED;
    }
    fd = xos.open(name, O_RDWR | O_CREAT, 0666);
    if (fd < 0) {
        rc = errno;
    } else {
        rc = xlog_recover(e, fd, name);
        if (rc == 0)
            ST(&ch(e)->ch_log_mapped_since, 0);
        xos.close(fd);
    }
    xos.flock(e->xe_ctl.cx_fd, LOCK_UN);
    return rc;
}

/* At xInit(DURABLE): if no other process uses the directory and a
 * checkpoint names a data file, recover it now. */
int xlog_recover_at_init(struct xac_env *e)
{
    struct xckpt ck;
    struct xctl_slot *s;
    uint32_t i, hwm;
    int fd, rc = 0, others = 0, have;

    xos.flock(e->xe_ctl.cx_fd, LOCK_EX);
    xctl_lock(&e->xe_ctl);
    xctl_reap(&e->xe_ctl);
    s = xctl_slots(&e->xe_ctl);
    hwm = ch(e)->ch_slot_hwm;
    for (i = 0; i < hwm; i++)
        if (i != e->xe_ctl.cx_slot && s[i].cs_state == XS_LIVE)
            others++;
    xctl_unlock(&e->xe_ctl);
    if (others == 0) {
        fd = ckpt_open(e);
        have = fd >= 0 && ckpt_read(e, fd, &ck);
        if (fd >= 0)
            xos.close(fd);
        if (have && ck.ck_path[0] != '\0') {
            fd = xos.open(ck.ck_path, O_RDWR, 0);
            if (fd >= 0) {
                rc = xlog_recover(e, fd, ck.ck_path);
                if (rc == 0)
                    ST(&ch(e)->ch_log_mapped_since, 0);
                xos.close(fd);
            }
        }
    }
    xos.flock(e->xe_ctl.cx_fd, LOCK_UN);
    return rc;
}

/* ---- archive and statistics ------------------------------------------ */

int xArchive(char ***names, int flags)
{
    struct xac_env *e = &xac_env;
    struct xckpt ck;
    uint32_t fno, n = 0, k;
    char path[4096], **v = NULL;
    int fd, lfd, have, rc = 0;

    if (names != NULL)
        *names = NULL;
    if (!e->xe_inited)
        return XAC_ENOTINIT;
    if (!e->xe_durable || (flags & ~XAC_ARCHIVE_REMOVE) != 0)
        return XAC_EINVAL;
    fd = ckpt_open(e);
    if (fd < 0)
        return -fd;
    xos.flock(fd, LOCK_EX);
    have = ckpt_read(e, fd, &ck);
    if (!have)
        goto out;
    /* Files below the checkpoint's start file are no longer needed. */
    for (fno = ck.ck_start; fno > 1; fno--) {
        if (log_path(e, path, sizeof path, fno - 1) != 0)
            break;
        lfd = xos.open(path, O_RDONLY, 0);
        if (lfd < 0)
            break;
        xos.close(lfd);
        n++;
    }
    if (names != NULL && n > 0) {
        size_t sz = (n + 1) * sizeof(char *) + (size_t)n * (strlen(path) + 1);
        char *strs;
        v = malloc(sz);
        if (v == NULL) {
            rc = ENOMEM;
            goto out;
        }
        strs = (char *)(v + n + 1);
        for (k = 0; k < n; k++) {
            log_path(e, path, sizeof path, ck.ck_start - n + k);
            v[k] = strs;
            strcpy(strs, path);
            strs += strlen(path) + 1;
        }
        v[n] = NULL;
        *names = v;
    } else if (names != NULL) {
        v = malloc(sizeof(char *));
        if (v == NULL) {
            rc = ENOMEM;
            goto out;
        }
        v[0] = NULL;
        *names = v;
    }
    if (flags & XAC_ARCHIVE_REMOVE) {
        for (k = 0; k < n; k++) {
            log_path(e, path, sizeof path, ck.ck_start - n + k);
            if (xos.unlink(path) != 0 && errno != ENOENT && rc == 0)
                rc = errno;
        }
    }
out:
    xos.flock(fd, LOCK_UN);
    xos.close(fd);
    return rc;
}

int xStats(struct xac_stats *st)
{
    struct xac_env *e = &xac_env;
    struct xctl_hdr *h;
    size_t i;

    if (st == NULL)
        return XAC_EINVAL;
    memset(st, 0, sizeof *st);
    if (!e->xe_inited)
        return XAC_ENOTINIT;
    h = ch(e);
    st->commits = e->xe_commits;
    st->log_bytes_mine = e->xe_mybytes;
    st->log_bytes = LD(&h->ch_log_bytes);
    st->log_records = LD(&h->ch_log_records);
    st->log_syncs = LD(&h->ch_log_syncs);
    st->log_payload = LD(&h->ch_log_payload);
    st->recoveries = LD(&h->ch_log_recovered);
    st->faults = e->xe_faults;
    st->extensions = e->xe_extensions;
    for (i = 0; i < e->xe_nkept; i++)
        st->kept_pages += (e->xe_pstate[e->xe_kept[i]] & XP_KEPT) != 0;
    st->failed = LD(&h->ch_log_failed);
    st->sync_method = e->xe_sync_method;
    st->keep_pages = e->xe_keep;
    st->working_mib = ((unsigned long long)e->xe_trim_pages << e->xe_pshift) >>
                      20;
    st->uffd = e->xe_uffd >= 0;
    st->direct_commits = e->xe_direct;
    st->log_direct_writes = e->xe_dwrites;
    st->log_leads = e->xe_leads;
    st->log_deferred = e->xe_deferred;
    st->pages_reused = e->xe_reused;
    st->page_table_access = e->xe_pte;
    return 0;
}
