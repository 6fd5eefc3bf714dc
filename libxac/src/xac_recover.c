/* xac_recover.c: recovery (xac_recover.h).  Replay starts in the log
 * file the newest checkpoint names, applies every record after its stamp
 * in stamp order, and stops at the first record that is torn, fails its
 * CRC32C, sits at another position than its LSN says, or leaves a gap in
 * the stamps.  The log then continues after the last good record, or in
 * a new file if garbage follows it, and a checkpoint records the result.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "xac.h"
#include "xac_atomic.h"
#include "xac_ckpt.h"
#include "xac_crc.h"
#include "xac_log.h"
#include "xac_logfile.h"
#include "xac_os.h"
#include "xac_recover.h"

/* Replay the records of one log file with stamps after *last.  Returns
 * the offset where valid records end in *end, and whether the file ends
 * there (*clean). */
static int replay_file(struct xlog *lg, int datafd, uint32_t fno,
                       uint64_t *last, uint64_t *end, int *clean,
                       uint64_t *applied)
{
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
    fd = xlf_open(lg, fno, O_RDONLY);
    if (fd < 0)
        return -fd;
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
    if (!xlf_header_ok(fh, fno) || fh.fh_psize != lg->lg_psize)
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
                if ((size_t)rg.rg_off + rg.rg_lenm1 + 1 > lg->lg_psize ||
                    p + rg.rg_lenm1 + 1 > buf + off + rh.lr_len) {
                    rc = EINVAL; /* a valid CRC over a malformed record */
                    goto out;
                }
                rc = datafd < 0 ? 0
                                : xos_write_all(datafd, p,
                                                (size_t)rg.rg_lenm1 + 1,
                                                ((off_t)rg.rg_page
                                                 << lg->lg_pshift) +
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

int xrcv_recover(struct xlog *lg, int datafd, const char *path)
{
    struct xctl_hdr *h = xlf_ch(lg);
    struct xckpt ck;
    uint64_t last, end = 0, applied = 0, tail;
    uint32_t fno, lastf = 0, start;
    int fd, rc, clean = 0, have;

    fd = xckpt_open(lg);
    if (fd < 0)
        return -fd;
    have = xckpt_read(lg, fd, &ck);
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
            rc = xrcv_recover(lg, ofd, ck.ck_path);
            if (ofd >= 0)
                xos.close(ofd);
            if (rc != 0)
                return rc;
            fd = xckpt_open(lg);
            if (fd < 0)
                return -fd;
            have = xckpt_read(lg, fd, &ck);
            xos.close(fd);
        }
    }
    last = have ? ck.ck_stamp : 0;
    start = have ? ck.ck_start : 1;
    for (fno = start;; fno++) {
        int c2;
        uint64_t e2;
        rc = replay_file(lg, datafd, fno, &last, &e2, &c2, &applied);
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
        if (xlf_use(lg, lastf) != 0 || xlf_sync(lg, lg->lg_fd) != 0)
            return errno ? errno : EIO;
        tail = ((uint64_t)lastf << 32) | end;
    } else {
        /* A torn or missing end: start a new file, never write behind
         * garbage. */
        fno = (lastf > start ? lastf : start) + (lastf != 0 ? 1 : 0);
        rc = xlf_create(lg, fno, last + 1);
        if (rc != 0)
            return rc;
        tail = ((uint64_t)fno << 32) | XLOG_FHDR;
    }
    xctl_lock(lg->lg_ctl);
    ST(&h->ch_log_tail, tail);
    ST(&h->ch_log_prev, tail);
    ST(&h->ch_log_tail_stamp, last);
    ST(&h->ch_log_synced, tail);
    ST(&h->ch_log_zeroed, tail);
    ST(&h->ch_log_dstamp, last);
    ST(&h->ch_log_leader, 0);
    ST(&h->ch_log_failed, 0);
    ST(&h->ch_commits, last);
    ST(&h->ch_log_ready, 1);
    h->ch_log_recovered++;
    xctl_unlock(lg->lg_ctl);
    return xckpt_write(lg, last, path);
}

/* Processes other than us that are attached (mapped: that have a
 * segment mapped), their dead reaped.  Under the control file's flock. */
static int others(struct xlog *lg, int mapped)
{
    struct xctl *cx = lg->lg_ctl;
    struct xctl_slot *s;
    uint32_t i, hwm;
    int n = 0;

    xctl_lock(cx);
    xctl_reap(cx);
    s = xctl_slots(cx);
    hwm = xlf_ch(lg)->ch_slot_hwm;
    for (i = 0; i < hwm; i++)
        if (i != cx->cx_slot && s[i].cs_state == XS_LIVE &&
            (!mapped || s[i].cs_mapped))
            n++;
    xctl_unlock(cx);
    return n;
}

int xrcv_file(struct xlog *lg, const char *name)
{
    int fd, rc;

    xos.flock(lg->lg_ctl->cx_fd, LOCK_EX);
    if (others(lg, 1) > 0) {
        xos.flock(lg->lg_ctl->cx_fd, LOCK_UN);
        return XAC_EMAPPED;
    }
    fd = xos.open(name, O_RDWR | O_CREAT, 0666);
    if (fd < 0) {
        rc = errno;
    } else {
        rc = xrcv_recover(lg, fd, name);
        if (rc == 0)
            ST(&xlf_ch(lg)->ch_log_mapped_since, 0);
        xos.close(fd);
    }
    xos.flock(lg->lg_ctl->cx_fd, LOCK_UN);
    return rc;
}

/* If no other process uses the directory and a checkpoint names a data
 * file, recover it now. */
int xrcv_at_init(struct xlog *lg)
{
    struct xckpt ck;
    int fd, rc = 0, have;

    xos.flock(lg->lg_ctl->cx_fd, LOCK_EX);
    if (others(lg, 0) == 0) {
        fd = xckpt_open(lg);
        have = fd >= 0 && xckpt_read(lg, fd, &ck);
        if (fd >= 0)
            xos.close(fd);
        if (have && ck.ck_path[0] != '\0') {
            fd = xos.open(ck.ck_path, O_RDWR, 0);
            if (fd >= 0) {
                rc = xrcv_recover(lg, fd, ck.ck_path);
                if (rc == 0)
                    ST(&xlf_ch(lg)->ch_log_mapped_since, 0);
                xos.close(fd);
            }
        }
    }
    xos.flock(lg->lg_ctl->cx_fd, LOCK_UN);
    return rc;
}
