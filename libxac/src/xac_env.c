/* xac_env.c: the process's LIBXAC state (xac_int.h): xInit, xShutdown,
 * the environment's settings, and the public functions that only pass a
 * checked request to one module (xSetSyncMethod, xRecover, xArchive). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "xac.h"
#include "xac_assert.h"
#include "xac_ckpt.h"
#include "xac_config.h"
#include "xac_fault.h"
#include "xac_int.h"
#include "xac_log.h"
#include "xac_map.h"
#include "xac_os.h"
#include "xac_recover.h"
#include "xac_seg.h"
#include "xac_wp.h"

#ifndef XAC_VERSION_STRING
#define XAC_VERSION_STRING "0.1.0"
#endif

/* Descriptors start at -1; the touched list starts sorted (empty). */
#define XAC_ENV_FRESH                                                      \
    {                                                                      \
        .xe_ctl.cx_fd = -1, .xe_map.mp_fd = -1, .xe_map.mp_memfd = -1,     \
        .xe_tx.tx_tsorted = 1, .xe_wp.wp_fd = -1, .xe_seg.sg_segfd = -1,   \
        .xe_seg.sg_poolfd = -1, .xe_seg.sg_datafd = -1,                    \
        .xe_log.lg_fd = -1, .xe_log.lg_dfd = -1                            \
    }

struct xac_env xac_env = XAC_ENV_FRESH;

/* A child of fork() inherited its parent's state: the slot, the writer
 * words and the transaction are the parent's.  Drop the child's copies
 * (never touching the shared state) so that it can xInit on its own. */
static void forget_parent(struct xac_env *e)
{
    static const struct xac_env fresh = XAC_ENV_FRESH;

    xflt_uninstall();
    xmap_forget(e);
    xwp_close(&e->xe_wp); /* our copy of the parent's descriptor */
    xseg_unmap(&e->xe_seg);
    if (e->xe_log.lg_durable)
        xlog_close(&e->xe_log);
    if (e->xe_ctl.cx_hdr != NULL)
        xos.munmap(e->xe_ctl.cx_hdr, e->xe_ctl.cx_maplen);
    if (e->xe_ctl.cx_fd >= 0)
        xos.close(e->xe_ctl.cx_fd);
    free(e->xe_dir);
    *e = fresh;
}

/* The message of the last xInit that refused an XAC_* variable. */
static char env_error[256];

const char *xEnvError(void)
{
    return env_error[0] != '\0' ? env_error : NULL;
}

/* Take the settings of the environment that are not the log's. */
static void apply_config(struct xac_env *e, const struct xcfg *cf,
                         int durable)
{
    e->xe_tx.tx_keep = (int)cf->cf_keep_pages;
    e->xe_tx.tx_policy = (int)cf->cf_policy;
    xcn_init(&e->xe_cn, (unsigned)cf->cf_writers, durable,
             (unsigned)cf->cf_turn_us, (unsigned)cf->cf_escalate,
             (unsigned)cf->cf_backoff_us,
             (uint64_t)xos.getpid() * 0x9E3779B97F4A7C15ULL);
    e->xe_cn.cn_handoff_ns = cf->cf_handoff_us * 1000u;
    e->xe_wp.wp_want = (int)cf->cf_uffd;
    e->xe_wp.wp_pte_want = (int)cf->cf_pte;
    e->xe_map.mp_reuse = (int)cf->cf_reuse;
    e->xe_map.mp_share = (int)cf->cf_share;
    e->xe_map.mp_trim_pages =
        (size_t)((cf->cf_working_mib << 20) >> e->xe_pshift);
}

int xInit(const char *path, int flags)
{
    struct xac_env *e = &xac_env;
    struct xcfg cfg;
    long ps;
    int rc;

    if (e->xe_inited && e->xe_pid != xos.getpid())
        forget_parent(e);
    if (e->xe_inited)
        return XAC_EINIT;
    if (path == NULL || (flags != NONDURABLE && flags != DURABLE))
        return XAC_EINVAL;
    /* Every variable, whatever the mode, before any state changes. */
    env_error[0] = '\0';
    if (xcfg_read(&cfg, env_error, sizeof env_error) != 0) {
        fprintf(stderr, "libxac: %s\n", env_error);
        return XAC_EINVAL;
    }
    ps = xos.pagesize();
    XASSERT(ps > 0 && (ps & (ps - 1)) == 0);
    e->xe_psize = (size_t)ps;
    for (e->xe_pshift = 0; ((size_t)1 << e->xe_pshift) < e->xe_psize;
         e->xe_pshift++)
        ;
    apply_config(e, &cfg, flags == DURABLE);
    if (xos.mkdir(path, 0777) != 0 && errno != EEXIST)
        return errno;
    e->xe_dir = strdup(path);
    if (e->xe_dir == NULL)
        return ENOMEM;
    rc = xctl_open(&e->xe_ctl, path, e->xe_psize);
    /* On one CPU the holder cannot run while we spin. */
    e->xe_ctl.cx_spin_ns = XCTL_CAN_SPIN && xos_cpus() > 1
                               ? (uint64_t)cfg.cf_lock_spin_us * 1000u
                               : 0;
    if (rc == 0)
        rc = xflt_install();
    if (rc != 0)
        goto fail_ctl;
    xseg_init(&e->xe_seg, &e->xe_ctl, e->xe_dir, e->xe_psize, e->xe_pshift,
              flags == DURABLE);
    if (flags == DURABLE) {
        xlog_init(&e->xe_log, &e->xe_ctl, e->xe_dir, e->xe_psize,
                  e->xe_pshift, &cfg);
        rc = xrcv_at_init(&e->xe_log);
        if (rc != 0) {
            xlog_close(&e->xe_log);
            xflt_uninstall();
            goto fail_ctl;
        }
    }
    e->xe_pid = xos.getpid();
    e->xe_flags = flags;
    e->xe_inited = 1;
    return 0;

fail_ctl:
    xctl_close(&e->xe_ctl);
    free(e->xe_dir);
    e->xe_dir = NULL;
    return rc;
}

int xShutdown(void)
{
    struct xac_env *e = &xac_env;
    int rc = 0;

    if (!e->xe_inited)
        return XAC_ENOTINIT;
    if (e->xe_tx.tx_depth > 0)
        return XAC_EINTXN;
    if (e->xe_map.mp_base != NULL)
        rc = xmap_release(e);
    xlog_close(&e->xe_log);
    xflt_uninstall();
    xcn_release(&e->xe_ctl); /* a place held for our turn */
    xctl_close(&e->xe_ctl);
    free(e->xe_dir);
    e->xe_dir = NULL;
    e->xe_inited = 0;
    return rc;
}

int xSetSyncMethod(int method)
{
    struct xac_env *e = &xac_env;

    if (!e->xe_inited)
        return XAC_ENOTINIT;
    if (method < XAC_SYNC_FDATASYNC || method > XAC_SYNC_DSYNC)
        return XAC_EINVAL;
    if (e->xe_tx.tx_depth > 0)
        return XAC_EINTXN;
    xlog_set_sync(&e->xe_log, method);
    return 0;
}

int xRecover(const char *name)
{
    struct xac_env *e = &xac_env;

    if (!e->xe_inited)
        return XAC_ENOTINIT;
    if (!e->xe_log.lg_durable)
        return XAC_EINVAL;
    if (name == NULL)
        return XAC_EINVAL;
    if (e->xe_map.mp_base != NULL)
        return XAC_EMAPPED;
    return xrcv_file(&e->xe_log, name);
}

int xArchive(char ***names, int flags)
{
    struct xac_env *e = &xac_env;

    if (names != NULL)
        *names = NULL;
    if (!e->xe_inited)
        return XAC_ENOTINIT;
    if (!e->xe_log.lg_durable || (flags & ~XAC_ARCHIVE_REMOVE) != 0)
        return XAC_EINVAL;
    return xckpt_archive(&e->xe_log, names, flags);
}

const char *xVersion(void)
{
    return "libxac " XAC_VERSION_STRING;
}
