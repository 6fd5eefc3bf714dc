/* xac_log.c: the log's records: building a commit's redo record from its
 * pages, appending it under ch_lock, and the alone commit's direct write
 * (xac_log.h describes the log; docs/libxac-formats.md the bytes).
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "xac.h"
#include "xac_assert.h"
#include "xac_atomic.h"
#include "xac_config.h"
#include "xac_crc.h"
#include "xac_group.h"
#include "xac_log.h"
#include "xac_logfile.h"
#include "xac_os.h"

/* The alone commit writes its record's blocks from a buffer of this
 * size (xlog_append_stable); a longer record takes the buffered write and
 * fdatasync instead. */
#define XLOG_DIRECT_BUF (256u << 10)

/* ---- setup and the failed state -------------------------------------- */

void xlog_init(struct xlog *lg, struct xctl *cx, const char *dir,
               size_t psize, unsigned pshift, const struct xcfg *cf)
{
    lg->lg_ctl = cx;
    lg->lg_dir = dir;
    lg->lg_psize = psize;
    lg->lg_pshift = pshift;
    lg->lg_durable = 1;
    lg->lg_fd = -1;
    lg->lg_dfd = -1;
    lg->lg_sync = (int)cf->cf_sync;
    lg->lg_delay_us = (unsigned)cf->cf_commit_delay_us;
    lg->lg_limit = cf->cf_log_limit;
    lg->lg_by_cpu = (int)cf->cf_lead_by_cpu;
    lg->lg_cpus = xos_cpus();
    /* 512-byte blocks first: direct_write moves to page-sized ones if the
     * file system wants them. */
    lg->lg_dalign = cf->cf_log_direct ? 512 : 0;
    /* Best effort: without it, the commit reads every before-image back. */
    lg->lg_before = xos.mmap(NULL, XAC_BEFORE_PAGES * psize,
                             PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (lg->lg_before == MAP_FAILED)
        lg->lg_before = NULL;
    lg->lg_nbefore = 0;
}

void xlog_close(struct xlog *lg)
{
    if (lg->lg_fd >= 0)
        xos.close(lg->lg_fd);
    lg->lg_fd = -1;
    if (lg->lg_dfd >= 0)
        xos.close(lg->lg_dfd);
    lg->lg_dfd = -1;
    free(lg->lg_dbuf);
    lg->lg_dbuf = NULL;
    free(lg->lg_buf);
    lg->lg_buf = NULL;
    lg->lg_cap = lg->lg_len = 0;
    if (lg->lg_before != NULL)
        xos.munmap(lg->lg_before, XAC_BEFORE_PAGES * lg->lg_psize);
    lg->lg_before = NULL;
    lg->lg_nbefore = 0;
    lg->lg_durable = 0;
}

void xlog_set_sync(struct xlog *lg, int method)
{
    if (lg->lg_sync != method && lg->lg_fd >= 0) {
        xos.close(lg->lg_fd); /* reopened with the right flags */
        lg->lg_fd = -1;
    }
    lg->lg_sync = method;
}

void xlog_fail(struct xlog *lg)
{
    struct xctl_hdr *h = xlf_ch(lg);

    ST(&h->ch_log_failed, 1);
    __atomic_add_fetch(&h->ch_log_seq, 1, __ATOMIC_SEQ_CST);
    xos.futex(&h->ch_log_seq, FUTEX_WAKE, INT_MAX, NULL);
}

int xlog_failed(const struct xlog *lg)
{
    return lg->lg_durable && lg->lg_ctl->cx_hdr != NULL &&
           LD(&lg->lg_ctl->cx_hdr->ch_log_failed);
}

/* ---- building records ------------------------------------------------ */

void xlog_keep_before(struct xlog *lg, uint32_t pg, const char *page)
{
    if (lg->lg_before == NULL || lg->lg_nbefore >= XAC_BEFORE_PAGES)
        return;
    memcpy(lg->lg_before + ((size_t)lg->lg_nbefore << lg->lg_pshift), page,
           lg->lg_psize);
    lg->lg_bpage[lg->lg_nbefore++] = pg;
}

const char *xlog_before(const struct xlog *lg, uint32_t pg)
{
    unsigned i;

    for (i = 0; i < lg->lg_nbefore; i++)
        if (lg->lg_bpage[i] == pg)
            return lg->lg_before + ((size_t)i << lg->lg_pshift);
    return NULL;
}

int xlog_record_start(struct xlog *lg, size_t nw)
{
    size_t need = sizeof(struct xlog_rec) +
                  nw * (sizeof(struct xlog_range) + lg->lg_psize) + 8;

    if (need > lg->lg_cap) {
        char *nb = realloc(lg->lg_buf, need);
        if (nb == NULL)
            return ENOMEM;
        lg->lg_buf = nb;
        lg->lg_cap = need;
    }
    lg->lg_len = sizeof(struct xlog_rec);
    lg->lg_nranges = 0;
    return 0;
}

/* The ranges of page pg where b differs from a, appended at p. */
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

void xlog_record_page(struct xlog *lg, uint32_t pg, const void *before,
                      const void *after)
{
    char *p = diff_page(lg->lg_buf + lg->lg_len, pg, before, after,
                        lg->lg_psize, &lg->lg_nranges);

    lg->lg_len = (size_t)(p - lg->lg_buf);
    /* xlog_record_start made room for every page changed throughout. */
    XASSERT(lg->lg_len + 8 <= lg->lg_cap);
}

void xlog_record_end(struct xlog *lg)
{
    struct xlog_rec rh;
    char *p = lg->lg_buf + lg->lg_len;

    while (((size_t)(p - lg->lg_buf) & 7) != 0)
        *p++ = 0;
    memset(&rh, 0, sizeof rh);
    rh.lr_magic = XLOG_RMAGIC;
    rh.lr_len = (uint32_t)(p - lg->lg_buf);
    rh.lr_nranges = lg->lg_nranges;
    memcpy(lg->lg_buf, &rh, sizeof rh);
    lg->lg_len = (size_t)(p - lg->lg_buf);
}

/* ---- appending ------------------------------------------------------- */

/* Start log file fno + 1 (under ch_lock): the current one is synced
 * first, so a record in a later file implies every earlier one is stable. */
static int rotate(struct xlog *lg, uint64_t c)
{
    struct xctl_hdr *h = xlf_ch(lg);
    uint64_t tail = h->ch_log_tail;
    uint32_t fno = (uint32_t)(tail >> 32);
    int rc;

    rc = xlf_use(lg, fno);
    if (rc == 0 && lg->lg_sync != XAC_SYNC_DSYNC)
        rc = xlf_sync(lg, lg->lg_fd);
    if (rc == 0)
        rc = xlf_create(lg, fno + 1, c);
    if (rc != 0)
        return rc;
    xlf_mark_stable(h, tail, h->ch_log_tail_stamp);
    ST(&h->ch_log_tail, ((uint64_t)(fno + 1) << 32) | XLOG_FHDR);
    return 0;
}

/* Under ch_lock: start the next log file if this one is full, open the
 * tail's file, allocate blocks, and seal the record for position *tailp
 * with stamp c of transaction txn (LSN, stamp, transaction, CRC32C).  0
 * or an errno value. */
static int place(struct xlog *lg, uint64_t c, uint64_t txn, uint64_t *tailp)
{
    struct xctl_hdr *h = xlf_ch(lg);
    struct xlog_rec rh;
    uint64_t tail, off;
    size_t len = lg->lg_len;
    int rc;

    /* Commit stamps in the log are consecutive: a gap ends it. */
    XASSERT(c == h->ch_log_tail_stamp + 1);
    XASSERT(len >= sizeof rh && (len & 7) == 0);
    tail = h->ch_log_tail;
    off = tail & 0xffffffffu;
    if (off + len > lg->lg_limit && off > XLOG_FHDR) {
        rc = rotate(lg, c);
        if (rc != 0)
            return rc;
        tail = h->ch_log_tail;
        off = tail & 0xffffffffu;
    }
    XASSERT(off >= XLOG_FHDR);
    rc = xlf_use(lg, (uint32_t)(tail >> 32));
    if (rc != 0)
        return rc;
    xlf_alloc(lg, tail, off + len);
    memcpy(&rh, lg->lg_buf, sizeof rh);
    rh.lr_lsn = tail;
    rh.lr_stamp = c;
    rh.lr_txn = txn;
    rh.lr_crc = 0;
    memcpy(lg->lg_buf, &rh, sizeof rh);
    rh.lr_crc = xac_crc32c(0, lg->lg_buf, len);
    memcpy(lg->lg_buf, &rh, sizeof rh);
    *tailp = tail;
    return 0;
}

/* Under ch_lock, the record at tail written: make it the log's tail. */
static void publish(struct xlog *lg, uint64_t tail, uint64_t c)
{
    struct xctl_hdr *h = xlf_ch(lg);
    struct xlog_rec rh;
    size_t len = lg->lg_len;

    memcpy(&rh, lg->lg_buf, sizeof rh);
    /* LSNs only grow. */
    XASSERT(tail >= h->ch_log_prev && tail + len > tail);
    /* prev, then stamp, then tail: a process that dies in between leaves
     * tail_stamp > ch_commits, which xctl_lock's repair turns into the
     * failed state (the record may be in the log but was not published). */
    ST(&h->ch_log_prev, tail);
    ST(&h->ch_log_tail_stamp, c);
    ST(&h->ch_log_tail, tail + len);
    h->ch_log_bytes += len;
    h->ch_log_records++;
    h->ch_log_payload += len - sizeof rh -
                         rh.lr_nranges * sizeof(struct xlog_range);
    lg->lg_mybytes += len;
    lg->lg_end = tail + len;
    if (lg->lg_sync == XAC_SYNC_DSYNC)
        /* O_DSYNC: the write was synchronous, and so were all before. */
        xlf_mark_stable(h, tail + len, c);
}

/* Write the sealed record at tail through the buffered descriptor. */
static int write_record(struct xlog *lg, uint64_t tail)
{
    return xos_write_all(lg->lg_fd, lg->lg_buf, lg->lg_len,
                         (off_t)(tail & 0xffffffffu));
}

int xlog_append(struct xlog *lg, uint64_t c, uint64_t txn)
{
    uint64_t tail;
    int rc;

    if (LD(&xlf_ch(lg)->ch_log_failed))
        return XAC_EIO;
    rc = place(lg, c, txn, &tail);
    if (rc == 0)
        rc = write_record(lg, tail);
    if (rc != 0) {
        xlog_fail(lg);
        return rc;
    }
    publish(lg, tail, c);
    return 0;
}

/* ---- the alone commit's direct write --------------------------------- */

/* Make lg_dfd log file fno opened O_DIRECT | O_DSYNC.  0 or -errno. */
static int dfd_for(struct xlog *lg, uint32_t fno)
{
    int rc = xlf_reopen(lg, fno, O_WRONLY | O_DIRECT | O_DSYNC, &lg->lg_dfd,
                        &lg->lg_dfno);

    if (rc > 0)
        lg->lg_dtail = 0; /* the kept block head was another file's */
    return rc < 0 ? rc : 0;
}

/* Write the sealed record at tail as whole blocks through lg_dfd: the
 * bytes of its first block before it (kept from the previous direct
 * write, else read back), the record, zeros to the block's end (the log
 * past its tail is zeros).  With O_DSYNC the write returns once the
 * blocks are stable: one request and one cache flush, where a buffered
 * write and fdatasync also pass the page cache and its writeback.  -1:
 * not applicable here (XAC_SYNC=fsync, which also wants the metadata,
 * among others: the caller writes and syncs as before); 0: the record is
 * stable; else an errno value. */
static int direct_write(struct xlog *lg, uint64_t tail)
{
    uint64_t off = tail & 0xffffffffu, base, head, span, end, keep;
    size_t len = lg->lg_len;
    int rc;

    /* The write makes its own blocks stable, not the file: every byte
     * before the record must be stable already (it is after an alone
     * commit, not after a rotation or a pool commit whose wait is still
     * in progress). */
    if (lg->lg_dalign == 0 || lg->lg_sync == XAC_SYNC_FSYNC ||
        LD(&xlf_ch(lg)->ch_log_synced) < tail)
        return -1;
    if (lg->lg_dbuf == NULL &&
        posix_memalign((void **)&lg->lg_dbuf, lg->lg_psize,
                       XLOG_DIRECT_BUF) != 0) {
        lg->lg_dbuf = NULL;
        return -1;
    }
    if (dfd_for(lg, (uint32_t)(tail >> 32)) != 0) {
        lg->lg_dalign = 0; /* O_DIRECT refused (EINVAL): as before */
        return -1;
    }
again:
    base = off & ~(uint64_t)(lg->lg_dalign - 1);
    head = off - base;
    span = (head + len + lg->lg_dalign - 1) & ~(uint64_t)(lg->lg_dalign - 1);
    if (span > XLOG_DIRECT_BUF)
        return -1;
    if (head > 0 && lg->lg_dtail != tail) {
        rc = xos_read_all(lg->lg_fd, lg->lg_dbuf, head, (off_t)base, 1);
        if (rc != 0)
            return -1; /* the buffered path reports its own errors */
    }
    memcpy(lg->lg_dbuf + head, lg->lg_buf, len);
    memset(lg->lg_dbuf + head + len, 0, span - head - len);
    rc = xos_write_all(lg->lg_dfd, lg->lg_dbuf, span, (off_t)base);
    if (rc == EINVAL) {
        /* Misaligned for this file system: nothing was written.  Try
         * page-sized blocks, then give up on the direct write. */
        lg->lg_dtail = 0;
        if (lg->lg_dalign < lg->lg_psize) {
            lg->lg_dalign = (unsigned)lg->lg_psize;
            goto again;
        }
        lg->lg_dalign = 0;
        return -1;
    }
    if (rc != 0)
        return rc; /* the log fails */
    /* Keep the head of the block the next record starts in. */
    end = off + len;
    keep = end & (lg->lg_dalign - 1);
    memmove(lg->lg_dbuf, lg->lg_dbuf + (end - keep - base), keep);
    lg->lg_dtail = tail + len;
    return 0;
}

int xlog_append_stable(struct xlog *lg, uint64_t c, uint64_t txn)
{
    struct xctl_hdr *h = xlf_ch(lg);
    uint64_t tail;
    int rc, direct = 0;

    if (LD(&h->ch_log_failed))
        return XAC_EIO;
    rc = place(lg, c, txn, &tail);
    if (rc == 0) {
        rc = direct_write(lg, tail);
        direct = rc >= 0;
        if (rc < 0)
            rc = write_record(lg, tail);
    }
    if (rc != 0) {
        xlog_fail(lg);
        return XAC_EIO;
    }
    publish(lg, tail, c);
    if (!direct)
        return xgrp_sync_locked(lg);
    xlf_mark_stable(h, tail + lg->lg_len, c);
    __atomic_add_fetch(&h->ch_log_syncs, 1, __ATOMIC_SEQ_CST);
    lg->lg_dwrites++;
    return 0;
}
