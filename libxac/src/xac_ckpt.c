/* xac_ckpt.c: checkpoints and the archive of log files (xac_ckpt.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>

#include "xac.h"
#include "xac_assert.h"
#include "xac_atomic.h"
#include "xac_ckpt.h"
#include "xac_crc.h"
#include "xac_log.h"
#include "xac_logfile.h"
#include "xac_os.h"

int xckpt_open(const struct xlog *lg)
{
    char path[4096];
    int fd;

    if ((size_t)snprintf(path, sizeof path, "%s/%s", lg->lg_dir, XCKP_NAME) >=
        sizeof path)
        return -ENAMETOOLONG;
    fd = xos.open(path, O_RDWR | O_CREAT, 0666);
    return fd < 0 ? -errno : fd;
}

/* The newest valid checkpoint slot, or 0 if there is none. */
int xckpt_read(const struct xlog *lg, int fd, struct xckpt *best)
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
            ck.ck_psize != lg->lg_psize ||
            xac_crc32c(0, &ck, sizeof ck) != crc)
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
static uint32_t start_file(const struct xlog *lg, uint64_t s, uint32_t lo)
{
    uint32_t fno = (uint32_t)(LD(&xlf_ch(lg)->ch_log_tail) >> 32);
    struct xlog_fhdr fh;

    while (fno > lo) {
        if (xlf_read_header(lg, fno, &fh) != 0)
            return fno;
        if (fh.fh_first_stamp <= s + 1)
            return fno;
        fno--;
    }
    return fno;
}

int xckpt_write(struct xlog *lg, uint64_t s, const char *path)
{
    struct xckpt ck, old;
    int fd, rc, have;
    char *abs = NULL;

    /* The WAL rule: the data file holds only commits whose records are
     * stable. */
    XASSERT(s <= LD(&xlf_ch(lg)->ch_log_dstamp));
    fd = xckpt_open(lg);
    if (fd < 0)
        return -fd;
    xos.flock(fd, LOCK_EX);
    have = xckpt_read(lg, fd, &old);
    memset(&ck, 0, sizeof ck);
    ck.ck_magic = XCKP_MAGIC;
    ck.ck_version = XLOG_VERSION;
    ck.ck_seq = have ? old.ck_seq + 1 : 1;
    ck.ck_stamp = s;
    ck.ck_start = start_file(lg, s, have ? old.ck_start : 1);
    if (have && ck.ck_start < old.ck_start)
        ck.ck_start = old.ck_start;
    ck.ck_psize = (uint32_t)lg->lg_psize;
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
        rc = xlf_sync(lg, fd);
    if (rc == 0) {
        ST(&xlf_ch(lg)->ch_ckpt_seq, ck.ck_seq);
        if (!have)
            rc = xlf_sync_dir(lg);
    }
    xos.flock(fd, LOCK_UN);
    xos.close(fd);
    if (rc != 0)
        xlog_fail(lg);
    return rc;
}

int xckpt_archive(const struct xlog *lg, char ***names, int flags)
{
    struct xckpt ck;
    uint32_t fno, n = 0, k;
    char path[4096], **v = NULL;
    int fd, lfd, have, rc = 0;

    if (names != NULL)
        *names = NULL;
    fd = xckpt_open(lg);
    if (fd < 0)
        return -fd;
    xos.flock(fd, LOCK_EX);
    have = xckpt_read(lg, fd, &ck);
    if (!have)
        goto out;
    /* Files below the checkpoint's start file are no longer needed. */
    for (fno = ck.ck_start; fno > 1; fno--) {
        if (xlf_path(lg, path, sizeof path, fno - 1) != 0)
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
            xlf_path(lg, path, sizeof path, ck.ck_start - n + k);
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
            xlf_path(lg, path, sizeof path, ck.ck_start - n + k);
            if (xos.unlink(path) != 0 && errno != ENOENT && rc == 0)
                rc = errno;
        }
    }
out:
    xos.flock(fd, LOCK_UN);
    xos.close(fd);
    return rc;
}
