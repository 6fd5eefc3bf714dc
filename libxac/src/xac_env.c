/* xac_env.c: initialization, shutdown and the segment (xMmap/xMunmap). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "xac.h"
#include "xac_assert.h"
#include "xac_config.h"
#include "xac_int.h"
#include "xac_os.h"

#ifndef XAC_VERSION_STRING
#define XAC_VERSION_STRING "0.1.0"
#endif

/* One allocation holds the touched pages and, after them, the kept ones. */
#define TOUCHED_BYTES(e) (2 * (e)->xe_tcap * sizeof *(e)->xe_touched)

struct xac_env xac_env = {
    .xe_fd = -1, .xe_segfd = -1, .xe_poolfd = -1, .xe_logfd = -1,
    .xe_memfd = -1, .xe_uffd = -1, .xe_dfd = -1, .xe_tsorted = 1};

/* A child of fork() inherited its parent's state: the slot, the writer
 * words and the transaction are the parent's.  Drop the child's copies
 * (never touching the shared state) so that it can xInit on its own. */
static void forget_parent(struct xac_env *e)
{
    xac_fault_uninstall();
    if (e->xe_base != NULL)
        xos.munmap(e->xe_base, e->xe_len); /* MADV_DONTFORK: not ours */
    if (e->xe_back != NULL)
        xos.munmap(e->xe_back, e->xe_len);
    if (e->xe_memfd >= 0)
        xos.close(e->xe_memfd);
    if (e->xe_uffd >= 0)
        xos.close(e->xe_uffd); /* our copy of the parent's descriptor */
    e->xe_uffd = -1;
    if (e->xe_pstate != NULL)
        xos.munmap(e->xe_pstate, e->xe_npages);
    if (e->xe_have != NULL)
        xos.munmap(e->xe_have, HAVE_BYTES(e));
    if (e->xe_touched != NULL)
        xos.munmap(e->xe_touched, TOUCHED_BYTES(e));
    if (e->xe_seg != NULL)
        xos.munmap(e->xe_seg, e->xe_seglen);
    if (e->xe_ctl.cx_hdr != NULL)
        xos.munmap(e->xe_ctl.cx_hdr, e->xe_ctl.cx_maplen);
    if (e->xe_fd >= 0)
        xos.close(e->xe_fd);
    if (e->xe_segfd >= 0)
        xos.close(e->xe_segfd);
    if (e->xe_poolfd >= 0)
        xos.close(e->xe_poolfd);
    if (e->xe_ctl.cx_fd >= 0)
        xos.close(e->xe_ctl.cx_fd);
    if (e->xe_logfd >= 0 && e->xe_durable)
        xos.close(e->xe_logfd);
    if (e->xe_dfd >= 0 && e->xe_durable)
        xos.close(e->xe_dfd);
    free(e->xe_logbuf);
    free(e->xe_dbuf);
    if (e->xe_before != NULL)
        xos.munmap(e->xe_before, XAC_BEFORE_PAGES * e->xe_psize);
    free(e->xe_name);
    free(e->xe_dir);
    free(e->xe_buf);
    memset(e, 0, sizeof *e);
    e->xe_fd = e->xe_segfd = e->xe_poolfd = e->xe_logfd = e->xe_memfd = -1;
    e->xe_dfd = -1;
    e->xe_ctl.cx_fd = -1;
    e->xe_tsorted = 1;
}

/* The message of the last xInit that refused an XAC_* variable. */
static char env_error[256];

const char *xEnvError(void)
{
    return env_error[0] != '\0' ? env_error : NULL;
}

/* Take the settings of the environment that are not the log's. */
static void apply_config(struct xac_env *e, const struct xcfg *cf)
{
    e->xe_keep = (int)cf->cf_keep_pages;
    e->xe_uffd_want = (int)cf->cf_uffd;
    e->xe_pte_want = (int)cf->cf_pte;
    e->xe_reuse = (int)cf->cf_reuse;
    e->xe_trim_pages = (size_t)((cf->cf_working_mib << 20) >> e->xe_pshift);
    e->xe_policy = (int)cf->cf_policy;
    e->xe_backoff_us = (unsigned)cf->cf_backoff_us;
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
    apply_config(e, &cfg);
    if (xos.mkdir(path, 0777) != 0 && errno != EEXIST)
        return errno;
    e->xe_dir = strdup(path);
    if (e->xe_dir == NULL)
        return ENOMEM;
    rc = xctl_open(&e->xe_ctl, path, e->xe_psize);
    if (rc == 0)
        rc = xac_fault_install();
    if (rc != 0) {
        xctl_close(&e->xe_ctl);
        free(e->xe_dir);
        e->xe_dir = NULL;
        return rc;
    }
    if (flags == DURABLE) {
        rc = xlog_init(e, &cfg);
        if (rc == 0)
            rc = xlog_recover_at_init(e);
        if (rc != 0) {
            xlog_close(e);
            xac_fault_uninstall();
            xctl_close(&e->xe_ctl);
            free(e->xe_dir);
            e->xe_dir = NULL;
            return rc;
        }
    }
    e->xe_pid = xos.getpid();
    e->xe_rand = (uint64_t)xos.getpid() * 0x9E3779B97F4A7C15ULL;
    e->xe_flags = flags;
    e->xe_inited = 1;
    return 0;
}

static int seg_unmap(struct xac_env *e)
{
    int rc = xmv_detach(e);

    if (xos.fdatasync(e->xe_fd) != 0 && rc == 0)
        rc = errno;
    xos_expect_faults(e->xe_base, e->xe_len, 0);
    xwp_close(e);
    AZ(xos.munmap(e->xe_base, e->xe_len));
    AZ(xos.munmap(e->xe_back, e->xe_len));
    xos.close(e->xe_memfd);
    AZ(xos.munmap(e->xe_pstate, e->xe_npages));
    AZ(xos.munmap(e->xe_have, HAVE_BYTES(e)));
    AZ(xos.munmap(e->xe_touched, TOUCHED_BYTES(e)));
    xos.close(e->xe_fd);
    free(e->xe_name);
    e->xe_name = NULL;
    e->xe_base = NULL;
    e->xe_back = NULL;
    e->xe_memfd = -1;
    e->xe_loaded = 0;
    e->xe_pstate = NULL;
    e->xe_have = NULL;
    e->xe_touched = NULL;
    e->xe_fd = -1;
    e->xe_len = 0;
    e->xe_npages = 0;
    e->xe_ntouched = e->xe_tcap = 0;
    e->xe_kept = NULL;
    e->xe_nkept = 0;
    e->xe_tsorted = 1;
    return rc;
}

int xShutdown(void)
{
    struct xac_env *e = &xac_env;
    int rc = 0;

    if (!e->xe_inited)
        return XAC_ENOTINIT;
    if (e->xe_depth > 0)
        return XAC_EINTXN;
    if (e->xe_base != NULL)
        rc = seg_unmap(e);
    xlog_close(e);
    xac_fault_uninstall();
    xctl_close(&e->xe_ctl);
    free(e->xe_dir);
    e->xe_dir = NULL;
    e->xe_inited = 0;
    return rc;
}

static void *anon(size_t len)
{
    return xos.mmap(NULL, len, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
}

void *xMmap(const char *name, size_t length)
{
    struct xac_env *e = &xac_env;
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
    if (e->xe_base != NULL) {
        errno = EBUSY;
        return MAP_FAILED;
    }
    if ((length >> e->xe_pshift) > UINT32_MAX) {
        errno = EFBIG;
        return MAP_FAILED;
    }
    e->xe_npages = (uint32_t)(length >> e->xe_pshift);
    e->xe_len = length;
    e->xe_tcap = e->xe_npages; /* a page is touched at most once */
    e->xe_fd = xos.open(name, O_RDWR | O_CREAT, 0666);
    if (e->xe_fd < 0)
        goto fail;
    if (xos.fstat(e->xe_fd, &st) != 0)
        goto fail;
    if ((size_t)st.st_size < length &&
        xos.ftruncate(e->xe_fd, (off_t)length) != 0)
        goto fail;
    (void)xos.fadvise(e->xe_fd, 0, 0, POSIX_FADV_RANDOM); /* a hint */
    e->xe_name = strdup(name);
    if (e->xe_name == NULL)
        goto fail;
    e->xe_pstate = anon(e->xe_npages);
    if (e->xe_pstate == MAP_FAILED)
        goto fail;
    e->xe_have = anon(HAVE_BYTES(e));
    if (e->xe_have == MAP_FAILED)
        goto fail;
    e->xe_touched = anon(TOUCHED_BYTES(e));
    if (e->xe_touched == MAP_FAILED)
        goto fail;
    err = xmv_attach(e);
    if (err != 0) {
        errno = err == XAC_EBADCTL ? EBUSY : err;
        goto fail;
    }
    attached = 1;
    /* The working memory, mapped twice (xac_fault.c).  Not inherited by
     * fork(): a child must not share its parent's working copies. */
    e->xe_memfd = memfd_create("libxac-segment", MFD_CLOEXEC);
    if (e->xe_memfd < 0 || xos.ftruncate(e->xe_memfd, (off_t)length) != 0)
        goto fail;
    e->xe_back = xos.mmap(NULL, length, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_NORESERVE, e->xe_memfd, 0);
    if (e->xe_back == MAP_FAILED)
        goto fail;
    e->xe_base = xos.mmap(NULL, length, PROT_NONE,
                          MAP_SHARED | MAP_NORESERVE, e->xe_memfd, 0);
    if (e->xe_base == MAP_FAILED)
        goto fail;
    if (xos.madvise(e->xe_back, length, MADV_DONTFORK) != 0 ||
        xos.madvise(e->xe_base, length, MADV_DONTFORK) != 0)
        goto fail;
    xos_expect_faults(e->xe_base, length, 1);
    e->xe_kept = e->xe_touched + e->xe_tcap;
    e->xe_nkept = 0;
    e->xe_ntouched = 0;
    e->xe_tsorted = 1;
    xwp_open(e, 1);
    return e->xe_base;

fail:
    err = errno;
    if (e->xe_base != NULL && e->xe_base != MAP_FAILED)
        xos.munmap(e->xe_base, length);
    if (e->xe_back != NULL && e->xe_back != MAP_FAILED)
        xos.munmap(e->xe_back, length);
    if (e->xe_memfd >= 0)
        xos.close(e->xe_memfd);
    e->xe_memfd = -1;
    e->xe_back = NULL;
    if (attached)
        xmv_detach(e);
    if (e->xe_touched != NULL && e->xe_touched != MAP_FAILED)
        xos.munmap(e->xe_touched, TOUCHED_BYTES(e));
    if (e->xe_pstate != NULL && e->xe_pstate != MAP_FAILED)
        xos.munmap(e->xe_pstate, e->xe_npages);
    if (e->xe_have != NULL && e->xe_have != MAP_FAILED)
        xos.munmap(e->xe_have, HAVE_BYTES(e));
    if (e->xe_fd >= 0)
        xos.close(e->xe_fd);
    free(e->xe_name);
    e->xe_name = NULL;
    e->xe_base = NULL;
    e->xe_pstate = NULL;
    e->xe_have = NULL;
    e->xe_touched = NULL;
    e->xe_fd = -1;
    e->xe_len = 0;
    e->xe_npages = 0;
    e->xe_tcap = 0;
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
    if (e->xe_base == NULL || strcmp(name, e->xe_name) != 0)
        return XAC_ENOTMAPPED;
    if (e->xe_depth > 0)
        return XAC_EINTXN;
    return seg_unmap(e);
}

int xCheckpoint(void)
{
    if (!xac_env.xe_inited)
        return XAC_ENOTINIT;
    if (xac_env.xe_depth > 0)
        return XAC_EINTXN;
    return xmv_checkpoint(&xac_env);
}


const char *xVersion(void)
{
    return "libxac " XAC_VERSION_STRING;
}
