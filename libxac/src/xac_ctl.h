/* xac_ctl.h: the shared control file "<xInit path>/xac.ctl".
 *
 * Layout, format 1 (docs/libxac.md has the full description):
 *
 *   offset 0      struct xctl_hdr, starting with magic and format
 *   ch_slotoff    ch_nslots process slots (struct xctl_slot)
 *
 * The file is mapped MAP_SHARED by every process that xInit()s the same
 * directory.  The header's robust process-shared mutex guards everything
 * after the first three fields; the file is created and initialized under
 * flock(LOCK_EX) so two processes never both initialize it.
 */
#ifndef XAC_CTL_H
#define XAC_CTL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#define XCTL_MAGIC 0x4C434158u /* "XACL" in a little-endian dump */
#define XCTL_FORMAT 1u
#define XCTL_NAME "xac.ctl"
#define XCTL_SLOTS_MIN 64u     /* slots in a new file; grows by doubling */

struct xctl_hdr {
    uint32_t ch_magic;       /* XCTL_MAGIC */
    uint32_t ch_format;      /* XCTL_FORMAT */
    uint32_t ch_psize;       /* page size of the machine that created it */
    uint32_t ch_lock_size;   /* sizeof(pthread_mutex_t), an ABI check */
    uint64_t ch_size;        /* bytes in use; other processes remap on growth */
    uint64_t ch_next_txn;    /* next global transaction id (thesis 3.1) */
    uint64_t ch_commits;     /* commits ever made through this file */
    uint32_t ch_nslots;      /* process slots */
    uint32_t ch_slotoff;     /* offset of slot 0 */
    pthread_mutex_t ch_lock; /* robust, process-shared */
};

enum xctl_slot_state { XS_FREE = 0, XS_LIVE = 1 };

struct xctl_slot {
    int32_t cs_pid;          /* owner, 0 if free */
    uint32_t cs_state;       /* enum xctl_slot_state */
    uint64_t cs_start;       /* owner's start time (xos_proc_start) */
    uint64_t cs_txn;         /* global id of its transaction, 0 if none */
    uint64_t cs_snapshot;    /* commit count its transaction reads at */
};

struct xctl {
    int cx_fd;
    struct xctl_hdr *cx_hdr; /* mapping of the whole file */
    size_t cx_maplen;
    uint32_t cx_slot;        /* our slot index */
};

/* Open (creating if needed) dir/xac.ctl and take a process slot.
 * Returns 0, XAC_EBADCTL, XAC_EBUSY or an errno value. */
int xctl_open(struct xctl *cx, const char *dir, size_t psize);
/* Free our slot and unmap.  Safe on a struct xctl that failed to open. */
void xctl_close(struct xctl *cx);
/* Take a new global transaction id for our slot. */
uint64_t xctl_txn_begin(struct xctl *cx);
/* Record the end of our transaction; committed != 0 bumps ch_commits. */
void xctl_txn_end(struct xctl *cx, int committed);

#endif
