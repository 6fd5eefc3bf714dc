/* xac_logfile.h: the log's files (xac_logfile.c) and their formats, for
 * the log's own files only (xac_log.h lists them).  docs/libxac-formats.md
 * gives the bytes. */
#ifndef XAC_LOGFILE_H
#define XAC_LOGFILE_H

#include <stddef.h>
#include <stdint.h>

#include "xac_ctl.h"
#include "xac_log.h"

#define XLOG_FMAGIC 0x474F4C58u /* "XLOG" in a little-endian dump */
#define XLOG_RMAGIC 0x43455258u /* "XREC" */
#define XLOG_VERSION 1u
#define XLOG_FHDR 64u           /* file header bytes */

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

_Static_assert(sizeof(struct xlog_rec) == 40, "record header");
_Static_assert(sizeof(struct xlog_fhdr) <= XLOG_FHDR, "file header");

static inline struct xctl_hdr *xlf_ch(const struct xlog *lg)
{
    return lg->lg_ctl->cx_hdr;
}

/* "<dir>/xac.log.NNNNNNNNNN" of log file fno.  0 or ENAMETOOLONG. */
int xlf_path(const struct xlog *lg, char *buf, size_t n, uint32_t fno);
/* Open log file fno with flags (O_CREAT: mode 0666).  A descriptor, or
 * -errno. */
int xlf_open(const struct xlog *lg, uint32_t fno, int flags);
/* Is fh a valid header (magic, version, CRC32C) of log file fno? */
int xlf_header_ok(struct xlog_fhdr fh, uint32_t fno);
/* Sync fd the way lg_sync says.  0 or an errno value. */
int xlf_sync(const struct xlog *lg, int fd);
/* Sync the directory (a file created or removed).  0 or errno. */
int xlf_sync_dir(const struct xlog *lg);
/* Make *fd (now open on log file *no, or -1) a descriptor of log file
 * fno opened with flags.  1 if it was reopened, 0 if it already was one,
 * or -errno. */
int xlf_reopen(const struct xlog *lg, uint32_t fno, int flags, int *fd,
               uint32_t *no);
/* Make lg_fd the descriptor of log file fno.  0 or errno. */
int xlf_use(struct xlog *lg, uint32_t fno);
/* Under ch_lock, before a record is written at LSN tail up to offset end
 * of the tail's file (lg_fno): reserve blocks ahead of it and make sure
 * the record lands on written zeros, writing the next chunk of zeros
 * ahead when the zeroed front (ch_log_zeroed) is near.  Best effort:
 * where it cannot, the record's write extends the file or converts the
 * blocks itself. */
void xlf_alloc(struct xlog *lg, uint64_t tail, uint64_t end);
/* Create log file fno (replacing a leftover) for records from stamp first
 * on, and make it and its directory entry stable.  0 or errno. */
int xlf_create(const struct xlog *lg, uint32_t fno, uint64_t first);
/* Read and check the header of log file fno.  0, EINVAL or errno. */
int xlf_read_header(const struct xlog *lg, uint32_t fno,
                    struct xlog_fhdr *fh);
/* Publish the log as stable up to LSN t, with s the newest stable commit
 * stamp (the marks only grow). */
void xlf_mark_stable(struct xctl_hdr *h, uint64_t t, uint64_t s);

#endif
