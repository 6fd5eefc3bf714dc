/* xac_wp.c: write protection of readable pages through userfaultfd.
 *
 * Detecting a transaction's first write to a page it can read takes an
 * mprotect to PROT_READ|PROT_WRITE in the fault handler and one back to
 * PROT_READ when the page stays kept after the commit (xSetKeepPages).
 * Each splits or merges a kernel mapping: on the development VM that pair
 * costs about 8.8 us, against about 4.5 us for the same pair done as
 * UFFDIO_WRITEPROTECT ioctls, which change only page-table entries.
 *
 * So while pages are kept, the segment is registered with a userfaultfd
 * in write-protect mode with UFFD_FEATURE_SIGBUS: a page granted for
 * reading is mapped read-write but write-protected, a write to it raises
 * SIGBUS in the faulting thread (no handler thread, no event queue), and
 * the handler lifts the protection of that one page.  The commit puts it
 * back with one ioctl per run of written pages.  Untouched pages stay
 * PROT_NONE, so reads are detected exactly as before.
 *
 * The segment is registered at xMmap, or at xSetKeepPages(1) after it, if
 * pages are kept then; it stays registered until xMunmap.
 *
 * Write protection of shared memory needs Linux 5.19; where it is missing
 * (older kernels, valgrind, a seccomp policy, vm.unprivileged_userfaultfd
 * without UFFD_USER_MODE_ONLY) or XAC_UFFD=0, xe_uffd stays -1 and every
 * change of access is an mprotect, as in the thesis.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <string.h>

#include "xac_int.h"
#include "xac_os.h"

/* Linux 5.11; only the constant may be missing from older headers. */
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

static int wp_ready(int fd, char *base, size_t len)
{
    struct uffdio_api api;
    struct uffdio_register reg;

    memset(&api, 0, sizeof api);
    api.api = UFFD_API;
    api.features = UFFD_FEATURE_SIGBUS | UFFD_FEATURE_WP_HUGETLBFS_SHMEM;
    if (xos.ioctl(fd, UFFDIO_API, &api) != 0)
        return 0;
    memset(&reg, 0, sizeof reg);
    reg.range.start = (unsigned long)base;
    reg.range.len = len;
    reg.mode = UFFDIO_REGISTER_MODE_WP;
    if (xos.ioctl(fd, UFFDIO_REGISTER, &reg) != 0)
        return 0;
    return (reg.ioctls & ((uint64_t)1 << _UFFDIO_WRITEPROTECT)) != 0;
}

void xwp_open(struct xac_env *e)
{
    int fd;

    e->xe_uffd = -1;
    /* Only while pages are kept: a registered mapping makes every
     * mprotect and fault a little dearer (page_touch's b rose ~15%), and
     * without kept pages there is nothing to gain. */
    if (!e->xe_uffd_want || !e->xe_keep)
        return;
    /* User-mode faults are the only ones we want, and asking for no more
     * is what an unprivileged process may do. */
    fd = xos.userfaultfd(O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    if (fd < 0 && errno == EINVAL) /* before 5.11 */
        fd = xos.userfaultfd(O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return;
    if (!wp_ready(fd, e->xe_base, e->xe_len)) {
        xos.close(fd);
        return;
    }
    e->xe_uffd = fd;
}

void xwp_close(struct xac_env *e)
{
    if (e->xe_uffd >= 0)
        xos.close(e->xe_uffd);
    e->xe_uffd = -1;
    e->xe_wp_now = 0;
}

int xwp_protect(struct xac_env *e, uint32_t pg, size_t n, int on)
{
    struct uffdio_writeprotect w;

    if (e->xe_uffd < 0) {
        errno = ENOSYS;
        return -1;
    }
    w.range.start = (unsigned long)(e->xe_base + ((size_t)pg << e->xe_pshift));
    w.range.len = n << e->xe_pshift;
    w.mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0;
    return xos.ioctl(e->xe_uffd, UFFDIO_WRITEPROTECT, &w);
}
