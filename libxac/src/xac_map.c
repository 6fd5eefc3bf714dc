/* xac_map.c: the mapped file (xMmap, xMunmap, xCheckpoint): the
 * process's working memory and transaction bookkeeping, attaching to the
 * version store and, DURABLE, recovering the file before the first
 * process maps it and checkpointing it when the store is written back.
 * The points where the data file is brought up to date need both the
 * store and the log, which never call each other: this file calls both.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "xac.h"
#include "xac_assert.h"
#include "xac_atomic.h"
#include "xac_ckpt.h"
#include "xac_gc.h"
#include "xac_group.h"
#include "xac_int.h"
#include "xac_log.h"
#include "xac_os.h"
#include "xac_recover.h"
#include "xac_seg.h"
#include "xac_wp.h"

/* ---- the version store and the log ----------------------------------- */

/* Attach to (creating if first) the version store of the mapped file.
 * DURABLE, as the first process: the log, not the pool, is the truth, so
 * the file is recovered from it (unless recovery ran since the last
 * process had it mapped).  Returns 0, EBUSY (another process maps
 * another file or length, or with the other flag), XAC_EBADCTL or an
 * errno value. */
static int attach(struct xac_env *e)
{
    struct xctl_hdr *h = e->xe_ctl.cx_hdr;
    struct xseg *sg = &e->xe_seg;
    int others, rc, durable = e->xe_log.lg_durable;

    rc = xseg_attach_begin(sg, e->xe_map.mp_fd, e->xe_map.mp_name,
                           e->xe_map.mp_npages, &others);
    if (rc != 0)
        return rc;
    if (others > 0) {
        /* Join: same durability (then the same file and length). */
        if (durable != (LD(&h->ch_log_ready) && LD(&h->ch_log_mapped_since)))
            rc = EBUSY;
    } else if (durable) {
        if (!LD(&h->ch_log_ready) || LD(&h->ch_log_mapped_since))
            rc = xrcv_recover(&e->xe_log, e->xe_map.mp_fd, e->xe_map.mp_name);
        if (rc == 0)
            ST(&h->ch_log_mapped_since, 1);
    } else {
        /* The log no longer describes the file. */
        ST(&h->ch_log_ready, 0);
    }
    if (rc != 0) {
        xseg_attach_fail(sg);
        return rc;
    }
    return xseg_attach_end(sg, others);
}

/* Detach; the last process writes every version back and syncs the file
 * (xMunmap's promise; DURABLE: then records a checkpoint).  A process
 * that leaves others behind syncs nothing: its commits are in the pool,
 * in the page cache as NONDURABLE says, or in the log.  0 or errno. */
static int detach(struct xac_env *e)
{
    struct xlog *lg = &e->xe_log;
    uint64_t lim;
    int rc, last, failed;

    if (e->xe_seg.sg_hdr == NULL)
        return 0;
    xos.flock(e->xe_ctl.cx_fd, LOCK_EX);
    if (lg->lg_durable)
        xgrp_sync_all(lg); /* a failure shows as the failed state */
    rc = xseg_leave(&e->xe_seg, &last, &failed, &lim);
    if (last && !failed && rc == 0) {
        if (xos.fdatasync(e->xe_map.mp_fd) != 0) {
            rc = errno;
            if (lg->lg_durable)
                xlog_fail(lg);
        } else if (lg->lg_durable) {
            /* A checkpoint: the data file holds every commit up to lim. */
            rc = xckpt_write(lg, lim, e->xe_map.mp_name);
        }
    } else if (lg->lg_durable && failed) {
        rc = XAC_EIO;
    }
    xos.flock(e->xe_ctl.cx_fd, LOCK_UN);
    xseg_unmap(&e->xe_seg);
    return rc;
}

/* xCheckpoint: every version the running transactions allow into the
 * file (DURABLE: those whose records are stable; then the file is synced
 * and a checkpoint recorded).  0 or errno. */
static int checkpoint(struct xac_env *e)
{
    struct xlog *lg = &e->xe_log;
    uint64_t m;
    int rc;

    if (e->xe_seg.sg_hdr == NULL)
        return 0;
    if (lg->lg_durable) {
        if (xlog_failed(lg))
            return XAC_EIO;
        rc = xgrp_sync_all(lg);
        if (rc != 0)
            return rc;
    }
    rc = xgc_checkpoint(&e->xe_seg, &m);
    if (!lg->lg_durable)
        return rc;
    if (rc != 0 || xos.fdatasync(e->xe_map.mp_fd) != 0) {
        /* Never trust a later sync of pages whose write-back failed. */
        rc = rc != 0 ? rc : errno;
        xlog_fail(lg);
        return rc;
    }
    return xckpt_write(lg, m, e->xe_map.mp_name);
}

/* ---- the mapping ----------------------------------------------------- */

static void *anon(size_t len)
{
    return xos.mmap(NULL, len, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
}

/* The mapping's fields as before xMmap. */
static void map_clear(struct xac_env *e)
{
    struct xmap *mp = &e->xe_map;
    struct xtxn *tx = &e->xe_tx;

    mp->mp_name = NULL;
    mp->mp_base = NULL;
    mp->mp_back = NULL;
    mp->mp_memfd = -1;
    mp->mp_fd = -1;
    mp->mp_len = 0;
    mp->mp_npages = 0;
    mp->mp_have = NULL;
    mp->mp_held = NULL;
    mp->mp_loaded = 0;
    mp->mp_nshared = 0;
    tx->tx_pstate = NULL;
    tx->tx_touched = NULL;
    tx->tx_ntouched = tx->tx_tcap = 0;
    tx->tx_kept = NULL;
    tx->tx_nkept = 0;
    tx->tx_tsorted = 1;
}

int xmap_release(struct xac_env *e)
{
    struct xmap *mp = &e->xe_map;
    struct xtxn *tx = &e->xe_tx;
    int rc = detach(e);

    xos_expect_faults(mp->mp_base, mp->mp_len, 0);
    xwp_close(&e->xe_wp);
    AZ(xos.munmap(mp->mp_base, mp->mp_len));
    AZ(xos.munmap(mp->mp_back, mp->mp_len));
    xos.close(mp->mp_memfd);
    AZ(xos.munmap(tx->tx_pstate, mp->mp_npages));
    AZ(xos.munmap(mp->mp_have, xmap_have_bytes(mp)));
    AZ(xos.munmap(tx->tx_touched, xtxn_lists_bytes(tx)));
    xos.close(mp->mp_fd);
    free(mp->mp_name);
    map_clear(e);
    return rc;
}

void xmap_forget(struct xac_env *e)
{
    struct xmap *mp = &e->xe_map;
    struct xtxn *tx = &e->xe_tx;

    if (mp->mp_base != NULL)
        xos.munmap(mp->mp_base, mp->mp_len); /* MADV_DONTFORK: not ours */
    if (mp->mp_back != NULL)
        xos.munmap(mp->mp_back, mp->mp_len);
    if (mp->mp_memfd >= 0)
        xos.close(mp->mp_memfd);
    if (tx->tx_pstate != NULL)
        xos.munmap(tx->tx_pstate, mp->mp_npages);
    if (mp->mp_have != NULL)
        xos.munmap(mp->mp_have, xmap_have_bytes(mp));
    if (tx->tx_touched != NULL)
        xos.munmap(tx->tx_touched, xtxn_lists_bytes(tx));
    if (mp->mp_fd >= 0)
        xos.close(mp->mp_fd);
    free(mp->mp_name);
}

void *xMmap(const char *name, size_t length)
{
    struct xac_env *e = &xac_env;
    struct xmap *mp = &e->xe_map;
    struct xtxn *tx = &e->xe_tx;
    struct stat st;
    int err, attached = 0;

    if (!e->xe_inited) {
        errno = EPERM;
        return MAP_FAILED;
    }
    if (name == NULL || length == 0 || (length & (e->xe_psize - 1)) != 0) {
        errno = EINVAL;
        return MAP_FAILED;
    }
    if (mp->mp_base != NULL) {
        errno = EBUSY;
        return MAP_FAILED;
    }
    if ((length >> e->xe_pshift) > UINT32_MAX) {
        errno = EFBIG;
        return MAP_FAILED;
    }
    mp->mp_npages = (uint32_t)(length >> e->xe_pshift);
    mp->mp_len = length;
    tx->tx_tcap = mp->mp_npages; /* a page is touched at most once */
    mp->mp_fd = xos.open(name, O_RDWR | O_CREAT, 0666);
    if (mp->mp_fd < 0)
        goto fail;
    if (xos.fstat(mp->mp_fd, &st) != 0)
        goto fail;
    if ((size_t)st.st_size < length &&
        xos.ftruncate(mp->mp_fd, (off_t)length) != 0)
        goto fail;
    (void)xos.fadvise(mp->mp_fd, 0, 0, POSIX_FADV_RANDOM); /* a hint */
    mp->mp_name = strdup(name);
    if (mp->mp_name == NULL)
        goto fail;
    tx->tx_pstate = anon(mp->mp_npages);
    if (tx->tx_pstate == MAP_FAILED)
        goto fail;
    mp->mp_have = anon(xmap_have_bytes(mp));
    if (mp->mp_have == MAP_FAILED)
        goto fail;
    mp->mp_held = (uint8_t *)(mp->mp_have + mp->mp_npages);
    tx->tx_touched = anon(xtxn_lists_bytes(tx));
    if (tx->tx_touched == MAP_FAILED)
        goto fail;
    err = attach(e);
    if (err != 0) {
        errno = err == XAC_EBADCTL ? EBUSY : err;
        goto fail;
    }
    attached = 1;
    /* The working memory, mapped twice (xac_fault.c).  Not inherited by
     * fork(): a child must not share its parent's working copies. */
    mp->mp_memfd = memfd_create("libxac-segment", MFD_CLOEXEC);
    if (mp->mp_memfd < 0 || xos.ftruncate(mp->mp_memfd, (off_t)length) != 0)
        goto fail;
    mp->mp_back = xos.mmap(NULL, length, PROT_READ | PROT_WRITE,
                           MAP_SHARED | MAP_NORESERVE, mp->mp_memfd, 0);
    if (mp->mp_back == MAP_FAILED)
        goto fail;
    mp->mp_base = xos.mmap(NULL, length, PROT_NONE,
                           MAP_SHARED | MAP_NORESERVE, mp->mp_memfd, 0);
    if (mp->mp_base == MAP_FAILED)
        goto fail;
    if (xos.madvise(mp->mp_back, length, MADV_DONTFORK) != 0 ||
        xos.madvise(mp->mp_base, length, MADV_DONTFORK) != 0)
        goto fail;
    xos_expect_faults(mp->mp_base, length, 1);
    tx->tx_kept = tx->tx_touched + tx->tx_tcap;
    tx->tx_nkept = 0;
    tx->tx_ntouched = 0;
    tx->tx_tsorted = 1;
    xwp_open(&e->xe_wp, mp->mp_base, length, e->xe_psize, e->xe_pshift,
             tx->tx_keep, 1);
    return mp->mp_base;

fail:
    err = errno;
    if (mp->mp_base != NULL && mp->mp_base != MAP_FAILED)
        xos.munmap(mp->mp_base, length);
    if (mp->mp_back != NULL && mp->mp_back != MAP_FAILED)
        xos.munmap(mp->mp_back, length);
    if (mp->mp_memfd >= 0)
        xos.close(mp->mp_memfd);
    if (attached)
        detach(e);
    if (tx->tx_touched != NULL && tx->tx_touched != MAP_FAILED)
        xos.munmap(tx->tx_touched, xtxn_lists_bytes(tx));
    if (tx->tx_pstate != NULL && tx->tx_pstate != MAP_FAILED)
        xos.munmap(tx->tx_pstate, mp->mp_npages);
    if (mp->mp_have != NULL && mp->mp_have != MAP_FAILED)
        xos.munmap(mp->mp_have, xmap_have_bytes(mp));
    if (mp->mp_fd >= 0)
        xos.close(mp->mp_fd);
    free(mp->mp_name);
    map_clear(e);
    errno = err;
    return MAP_FAILED;
}

int xMunmap(const char *name)
{
    struct xac_env *e = &xac_env;

    if (!e->xe_inited)
        return XAC_ENOTINIT;
    if (name == NULL)
        return XAC_EINVAL;
    if (e->xe_map.mp_base == NULL || strcmp(name, e->xe_map.mp_name) != 0)
        return XAC_ENOTMAPPED;
    if (e->xe_tx.tx_depth > 0)
        return XAC_EINTXN;
    return xmap_release(e);
}

int xCheckpoint(void)
{
    if (!xac_env.xe_inited)
        return XAC_ENOTINIT;
    if (xac_env.xe_tx.tx_depth > 0)
        return XAC_EINTXN;
    return checkpoint(&xac_env);
}
