/* xac_ckpt.h: checkpoints and the archive (xac_ckpt.c).  A checkpoint,
 * one of two alternating slots of "<dir>/xac.ckpt", says: the data file
 * holds every commit up to stamp S and has been synced; replay starts in
 * log file F.  Log files before F can be archived. */
#ifndef XAC_CKPT_H
#define XAC_CKPT_H

#include <stdint.h>

#include "xac_log.h"

#define XCKP_MAGIC 0x504B4358u /* "XCKP" in a little-endian dump */
#define XCKP_NAME "xac.ckpt"
#define XCKP_SLOT 512u

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

_Static_assert(sizeof(struct xckpt) == XCKP_SLOT, "checkpoint slot");

/* Open (creating) "<dir>/xac.ckpt": a descriptor or -errno. */
int xckpt_open(const struct xlog *lg);
/* The newest valid checkpoint slot of fd into *best: 1, or 0 if there is
 * none. */
int xckpt_read(const struct xlog *lg, int fd, struct xckpt *best);
/* Record a checkpoint: data file path (NULL: the one the last checkpoint
 * named) holds every commit up to stamp s and has been synced.  0 or
 * errno (then the log is failed). */
int xckpt_write(struct xlog *lg, uint64_t s, const char *path);
/* xArchive: list (names) and with XAC_ARCHIVE_REMOVE delete the log files
 * before the newest checkpoint's start file.  0 or errno. */
int xckpt_archive(const struct xlog *lg, char ***names, int flags);

#endif
