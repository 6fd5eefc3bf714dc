/* xac_wp.c: access control through page-table entries (userfaultfd).
 *
 * Two uses; the second includes the first.
 *
 * 1. Write protection of readable pages.  Detecting a transaction's first
 *    write to a page it can read takes an mprotect to
 *    PROT_READ|PROT_WRITE in the fault handler and one back to PROT_READ
 *    when the page stays kept after the commit (xSetKeepPages).  Each
 *    splits or merges a kernel mapping: on the development VM that pair
 *    costs about 8.8 us, against about 4.5 us for the same pair done as
 *    UFFDIO_WRITEPROTECT ioctls, which change only page-table entries.  So
 *    the segment is registered with a userfaultfd in write-protect mode
 *    with UFFD_FEATURE_SIGBUS: a page granted for reading is mapped
 *    read-write but write-protected, a write to it raises SIGBUS in the
 *    faulting thread (no handler thread, no event queue), and the handler
 *    lifts the protection of that one page.  The commit puts it back with
 *    one ioctl per run of written pages.  Untouched pages stay PROT_NONE.
 *
 * 2. Page-table access (wp_pte; XAC_PTE=0 turns it off).  Granting and
 *    revoking access with mprotect splits the segment's mapping around the
 *    page and merges it back: with 4 processes inserting into a B+-tree
 *    that was about a quarter of all CPU time.  Where the kernel can, the
 *    segment is instead mapped read-write once and registered for missing
 *    and minor faults too (shared memory: Linux 5.14).  A page the
 *    transaction has not touched has no page-table entry, so any access
 *    to it raises SIGBUS; the grant maps it with UFFDIO_CONTINUE
 *    (write-protected for a read: Linux 6.6's UFFDIO_CONTINUE_MODE_WP,
 *    else a second ioctl), and revoking is MADV_DONTNEED, which drops the
 *    entries and keeps the working memory's contents.  No mapping is ever
 *    split, so there is no vm.max_map_count limit to escalate around.
 *
 * (2) is tried at xMmap whatever xSetKeepPages says; (1) alone is set up
 * only while pages are kept, at xMmap or at xSetKeepPages(1) after it.
 * The registration lasts until xMunmap.
 *
 * Where userfaultfd or write protection of shared memory is missing
 * (before Linux 5.19, valgrind, a seccomp policy,
 * vm.unprivileged_userfaultfd without UFFD_USER_MODE_ONLY) or XAC_UFFD=0,
 * wp_fd stays -1 and every change of access is an mprotect, as in the
 * thesis.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <string.h>

#include "xac_assert.h"
#include "xac_os.h"
#include "xac_wp.h"

/* Linux 5.11; only the constant may be missing from older headers. */
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
/* Linux 6.6; older kernels refuse it with EINVAL (xwp_map). */
#ifndef UFFDIO_CONTINUE_MODE_WP
#define UFFDIO_CONTINUE_MODE_WP ((__u64)1 << 1)
#endif

static int new_fd(void)
{
    /* User-mode faults are the only ones we want, and asking for no more
     * is what an unprivileged process may do. */
    int fd = xos.userfaultfd(O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);

    if (fd < 0 && errno == EINVAL) /* before 5.11 */
        fd = xos.userfaultfd(O_CLOEXEC | O_NONBLOCK);
    return fd;
}

/* Register [base, base + len) on fd for write protection, and (pte) for
 * missing and minor faults.  1 if every ioctl that use needs is there. */
static int register_range(int fd, char *base, size_t len, int pte)
{
    struct uffdio_register reg;
    uint64_t need = (uint64_t)1 << _UFFDIO_WRITEPROTECT;

    memset(&reg, 0, sizeof reg);
    reg.range.start = (unsigned long)base;
    reg.range.len = len;
    reg.mode = UFFDIO_REGISTER_MODE_WP;
    if (pte) {
        reg.mode |= UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_MINOR;
        need |= (uint64_t)1 << _UFFDIO_CONTINUE;
    }
    if (xos.ioctl(fd, UFFDIO_REGISTER, &reg) != 0)
        return 0;
    return (reg.ioctls & need) == need;
}

/* Enable the API on fd, then register_range.  1 on success. */
static int ready(int fd, char *base, size_t len, int pte)
{
    struct uffdio_api api;

    memset(&api, 0, sizeof api);
    api.api = UFFD_API;
    api.features = UFFD_FEATURE_SIGBUS | UFFD_FEATURE_WP_HUGETLBFS_SHMEM;
    if (pte)
        api.features |= UFFD_FEATURE_MINOR_SHMEM;
    if (xos.ioctl(fd, UFFDIO_API, &api) != 0)
        return 0;
    return register_range(fd, base, len, pte);
}

int xwp_register(struct xwp *wp, uint32_t pg, size_t n)
{
    return register_range(wp->wp_fd,
                          wp->wp_base + ((size_t)pg << wp->wp_pshift),
                          n << wp->wp_pshift, 1)
               ? 0
               : -1;
}

/* Register for page-table access, then open the whole mapping: its pages
 * have no entries yet, so every first access still faults.  1 on
 * success; else the mapping is still PROT_NONE (closing fd unregisters
 * it). */
static int pte_ready(struct xwp *wp, int fd)
{
    if (!ready(fd, wp->wp_base, wp->wp_len, 1))
        return 0;
    return xos.mprotect(wp->wp_base, wp->wp_len, PROT_READ | PROT_WRITE) ==
           0;
}

void xwp_open(struct xwp *wp, char *base, size_t len, size_t psize,
              unsigned pshift, int keep, int fresh)
{
    int fd;

    XASSERT(((size_t)1 << pshift) == psize && len % psize == 0);
    wp->wp_base = base;
    wp->wp_len = len;
    wp->wp_psize = psize;
    wp->wp_pshift = pshift;
    wp->wp_fd = -1;
    wp->wp_pte = 0;
    wp->wp_cont = 1;
    if (!wp->wp_want)
        return;
    /* Only on a fresh mapping: one used under mprotect may hold entries
     * of revoked pages, which opening the mapping would open too. */
    if (wp->wp_pte_want && fresh) {
        fd = new_fd();
        if (fd >= 0 && pte_ready(wp, fd)) {
            wp->wp_fd = fd;
            wp->wp_pte = 1;
            return;
        }
        if (fd >= 0)
            xos.close(fd);
    }
    /* Write protection alone pays only while pages are kept: a registered
     * mapping makes every mprotect and fault a little dearer (page_touch's
     * b rose ~15%). */
    if (!keep)
        return;
    fd = new_fd();
    if (fd < 0)
        return;
    if (!ready(fd, base, len, 0)) {
        xos.close(fd);
        return;
    }
    wp->wp_fd = fd;
}

void xwp_close(struct xwp *wp)
{
    if (wp->wp_fd >= 0)
        xos.close(wp->wp_fd);
    wp->wp_fd = -1;
    wp->wp_now = 0;
    wp->wp_pte = 0;
}

int xwp_protect(struct xwp *wp, uint32_t pg, size_t n, int on)
{
    struct uffdio_writeprotect w;

    if (wp->wp_fd < 0) {
        errno = ENOSYS;
        return -1;
    }
    w.range.start =
        (unsigned long)(wp->wp_base + ((size_t)pg << wp->wp_pshift));
    w.range.len = n << wp->wp_pshift;
    w.mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0;
    return xos.ioctl(wp->wp_fd, UFFDIO_WRITEPROTECT, &w);
}

int xwp_map(struct xwp *wp, uint32_t pg, int wprot)
{
    struct uffdio_continue c;

    memset(&c, 0, sizeof c);
    c.range.start =
        (unsigned long)(wp->wp_base + ((size_t)pg << wp->wp_pshift));
    c.range.len = wp->wp_psize;
    c.mode = wprot && wp->wp_cont ? UFFDIO_CONTINUE_MODE_WP : 0;
    if (xos.ioctl(wp->wp_fd, UFFDIO_CONTINUE, &c) != 0) {
        if (errno == EINVAL && c.mode != 0) {
            wp->wp_cont = 0; /* before 6.6: map, then protect */
            return xwp_map(wp, pg, wprot);
        }
        /* Mapped already: then only its protection has to be right. */
        if (errno != EEXIST)
            return -1;
        return xwp_protect(wp, pg, 1, wprot);
    }
    return wprot && c.mode == 0 ? xwp_protect(wp, pg, 1, 1) : 0;
}

int xwp_map_run(struct xwp *wp, uint32_t pg, size_t n)
{
    struct uffdio_continue c;

    if (!wp->wp_cont) {
        errno = EINVAL; /* the caller maps them one by one */
        return -1;
    }
    memset(&c, 0, sizeof c);
    c.range.start =
        (unsigned long)(wp->wp_base + ((size_t)pg << wp->wp_pshift));
    c.range.len = n << wp->wp_pshift;
    c.mode = UFFDIO_CONTINUE_MODE_WP;
    return xos.ioctl(wp->wp_fd, UFFDIO_CONTINUE, &c);
}

int xwp_revoke(struct xwp *wp, uint32_t pg, size_t n)
{
    return xos.madvise(wp->wp_base + ((size_t)pg << wp->wp_pshift),
                       n << wp->wp_pshift, MADV_DONTNEED);
}
