/* xac_txn.c: beginning and ending transactions, and the advisory
 * function.
 *
 * Commit writes each run of consecutive written pages to the file with one
 * pwrite(2) from the private copies, drops the copies with
 * madvise(MADV_DONTNEED) (the MAP_PRIVATE pages then show the file again),
 * and revokes access with one mprotect(PROT_NONE) per run of touched pages.
 * Abort does the same without the pwrite.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "xac.h"
#include "xac_assert.h"
#include "xac_int.h"
#include "xac_os.h"

/* Above this many runs, one mprotect over the whole span is cheaper. */
#define RUNS_MAX 64

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int write_out(struct xac_env *e, uint32_t pg, size_t npg)
{
    const char *src = e->xe_base + ((size_t)pg << e->xe_pshift);
    size_t left = npg << e->xe_pshift;
    off_t off = (off_t)pg << e->xe_pshift;
    ssize_t n;

    while (left > 0) {
        n = xos.pwrite(e->xe_fd, src, left, off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        XASSERT(n > 0);
        src += n;
        off += n;
        left -= (size_t)n;
    }
    return 0;
}

int xac_txn_finish(int commit)
{
    struct xac_env *e = &xac_env;
    uint32_t *t = e->xe_touched;
    size_t n = e->xe_ntouched, i, j, k, m, runs = 0;
    int rc = 0;

    if (!e->xe_tsorted)
        qsort(t, n, sizeof *t, cmp_u32);
    /* Pass 1: write back and drop the private copies, run by run. */
    for (i = 0; i < n; i = j) {
        for (j = i + 1; j < n && t[j] == t[j - 1] + 1; j++)
            ;
        runs++;
        for (k = i; k < j; k = m) {
            for (m = k; m < j && e->xe_pstate[t[m]] == XP_WRITE; m++)
                ;
            if (m == k) {
                m++;
                continue;
            }
            if (commit && rc == 0)
                rc = write_out(e, t[k], m - k);
            AZ(xos.madvise(e->xe_base + ((size_t)t[k] << e->xe_pshift),
                           (m - k) << e->xe_pshift, MADV_DONTNEED));
        }
    }
    /* Pass 2: revoke access.  Setting PROT_NONE only merges mappings, but
     * if the kernel still refuses, the whole segment is one mapping. */
    if (runs > RUNS_MAX) {
        if (xos.mprotect(e->xe_base + ((size_t)t[0] << e->xe_pshift),
                         (size_t)(t[n - 1] - t[0] + 1) << e->xe_pshift,
                         PROT_NONE) != 0)
            AZ(xos.mprotect(e->xe_base, e->xe_len, PROT_NONE));
    } else {
        for (i = 0; i < n; i = j) {
            for (j = i + 1; j < n && t[j] == t[j - 1] + 1; j++)
                ;
            if (xos.mprotect(e->xe_base + ((size_t)t[i] << e->xe_pshift),
                             (j - i) << e->xe_pshift, PROT_NONE) != 0) {
                AZ(xos.mprotect(e->xe_base, e->xe_len, PROT_NONE));
                break;
            }
        }
    }
    for (i = 0; i < n; i++)
        e->xe_pstate[t[i]] = XP_NONE;
    e->xe_ntouched = 0;
    e->xe_tsorted = 1;
    return rc;
}

static int txn_start(int query)
{
    struct xac_env *e = &xac_env;

    if (!e->xe_inited)
        return XAC_ENOTINIT;
    if (e->xe_base == NULL)
        return XAC_ENOTMAPPED;
    if (e->xe_depth > 0) {
        if (e->xe_qdepth != 0 && !query)
            return XAC_EQUERY;
        e->xe_depth++;
        if (query && e->xe_qdepth == 0)
            e->xe_qdepth = e->xe_depth;
        return 0;
    }
    e->xe_depth = 1;
    e->xe_qdepth = query ? 1 : 0;
    e->xe_failed = 0;
    xctl_txn_begin(&e->xe_ctl);
    return 0;
}

static int txn_stop(int query)
{
    struct xac_env *e = &xac_env;
    int in_query, commit, rc;

    if (e->xe_depth == 0)
        return XAC_ENOTXN;
    in_query = e->xe_qdepth != 0 && e->xe_depth >= e->xe_qdepth;
    if (in_query != query)
        return XAC_EQUERY;
    if (e->xe_depth == e->xe_qdepth)
        e->xe_qdepth = 0;
    if (e->xe_depth > 1) {
        e->xe_depth--;
        return e->xe_failed ? FAILED : PENDING;
    }
    commit = !e->xe_failed && !query;
    rc = xac_txn_finish(commit);
    e->xe_depth = 0;
    xctl_txn_end(&e->xe_ctl, commit && rc == 0);
    if (rc != 0)
        return rc;
    return (commit || query) ? COMMITTED : ABORTED;
}

int xbegin(void)
{
    return txn_start(0);
}

int xend(void)
{
    return txn_stop(0);
}

int xbeginQuery(void)
{
    return txn_start(1);
}

int xendQuery(void)
{
    return txn_stop(1);
}

int xFail(void)
{
    if (xac_env.xe_depth == 0)
        return XAC_ENOTXN;
    xac_env.xe_failed = 1;
    return 0;
}

int xValidate(void)
{
    if (xac_env.xe_depth == 0)
        return XAC_ENOTXN;
    return xac_env.xe_failed ? FAILED : PENDING;
}

int setPageAccess(void *addr, int mode)
{
    struct xac_env *e = &xac_env;
    char *a = addr;
    uint32_t pg;
    int want;

    if (e->xe_depth == 0)
        return XAC_ENOTXN;
    if (mode != READ && mode != READ_WRITE)
        return XAC_EINVAL;
    if (a < e->xe_base || a >= e->xe_base + e->xe_len)
        return XAC_EBADADDR;
    want = mode == READ ? XP_READ : XP_WRITE;
    if (want == XP_WRITE && e->xe_qdepth != 0)
        return XAC_EQUERY;
    pg = (uint32_t)((size_t)(a - e->xe_base) >> e->xe_pshift);
    if (e->xe_pstate[pg] >= want)
        return 0;
    return xac_grant(pg, want);
}
