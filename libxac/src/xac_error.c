/* xac_error.c: xStrerror and the assertion-failure path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xac.h"
#include "xac_assert.h"

static const char *const xac_errstr[] = {
    [XAC_ENOTINIT - XAC_ENOTINIT] = "XAC_ENOTINIT: xInit has not been called",
    [XAC_ENOTINIT - XAC_EINIT] = "XAC_EINIT: xInit was already called",
    [XAC_ENOTINIT - XAC_EINVAL] = "XAC_EINVAL: invalid argument",
    [XAC_ENOTINIT - XAC_ENOTXN] = "XAC_ENOTXN: no transaction in progress",
    [XAC_ENOTINIT - XAC_EINTXN] = "XAC_EINTXN: a transaction is in progress",
    [XAC_ENOTINIT - XAC_ENOTMAPPED] =
        "XAC_ENOTMAPPED: no segment is mapped under that name",
    [XAC_ENOTINIT - XAC_EMAPPED] = "XAC_EMAPPED: the segment is still mapped",
    [XAC_ENOTINIT - XAC_EBADADDR] =
        "XAC_EBADADDR: address is not inside the segment",
    [XAC_ENOTINIT - XAC_EQUERY] =
        "XAC_EQUERY: not allowed with a read-only transaction",
    [XAC_ENOTINIT - XAC_ENOTSUP] =
        "XAC_ENOTSUP: not yet supported by this version of libxac",
    [XAC_ENOTINIT - XAC_EBADCTL] =
        "XAC_EBADCTL: control file has a wrong magic number, format version "
        "or page size",
    [XAC_ENOTINIT - XAC_EBUSY] =
        "XAC_EBUSY: every process slot of the control file is taken",
    [XAC_ENOTINIT - XAC_EFULL] =
        "XAC_EFULL: the version pool is full; the transaction aborted",
    [XAC_ENOTINIT - XAC_EIO] =
        "XAC_EIO: a log write or sync failed; the transaction is not "
        "durable and no commit is until recovery (xShutdown, xInit)",
};

const char *xStrerror(int code)
{
    switch (code) {
    case 0:
        return "success";
    case COMMITTED:
        return "COMMITTED: the transaction committed";
    case ABORTED:
        return "ABORTED: the transaction aborted; the segment is unchanged";
    case PENDING:
        return "PENDING: no conflict detected so far";
    case FAILED:
        return "FAILED: the transaction will abort at its outermost xend";
    default:
        break;
    }
    if (code <= XAC_ENOTINIT && code >= XAC_ELAST)
        return xac_errstr[XAC_ENOTINIT - code];
    if (code > 0 && code < 4096)
        return strerror(code);
    return "unknown libxac return value";
}

void xac_assert_fail(const char *func, const char *file, int line,
                     const char *cond)
{
    char buf[512];
    int n = snprintf(buf, sizeof buf, "libxac: assertion failed in %s (%s:%d): %s\n",
                     func, file, line, cond);
    if (n > 0) {
        ssize_t rc = write(STDERR_FILENO, buf,
                           (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
        (void)rc;
    }
    abort();
}
