/* test_13_wp: kept pages under userfaultfd write protection (xac_wp.c),
 * and page-table access.  Every write to a kept page must reach the
 * commit, whichever mechanism stops it (XAC_PTE=1: no entry until the
 * grant, write protection, MADV_DONTNEED; XAC_UFFD=1 XAC_PTE=0: SIGBUS and
 * an ioctl for writes, mprotect otherwise; XAC_UFFD=0: SIGSEGV and
 * mprotect), including after the protection was left on a page that was
 * revoked, and when the ioctl fails.  The same checks run under all three,
 * and no access outside a transaction goes unseen. */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_int.h"
#include "xac_os.h"

#define NPG 16

static int *x;
static int vg;
/* The configuration of the current run, for its children. */
static int cfg_uffd, cfg_pte;

static void configure(void)
{
    setenv("XAC_UFFD", cfg_uffd ? "1" : "0", 1);
    setenv("XAC_PTE", cfg_pte ? "1" : "0", 1);
}

static int *pg(int n, int mode)
{
    return tu_page(x, n, mode, vg);
}

static int rd(int n)
{
    return tu_peek(x, n, vg);
}

/* Can this kernel write-protect shared memory through userfaultfd (and,
 * minor, also report minor faults on it)?  Asked here on our own, not
 * through the library. */
static int kernel_can(int minor)
{
    struct uffdio_api api;
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | 1 /* user mode */);
    int ok;

    if (fd < 0)
        fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
    if (fd < 0)
        return 0;
    memset(&api, 0, sizeof api);
    api.api = UFFD_API;
    api.features = UFFD_FEATURE_SIGBUS | UFFD_FEATURE_WP_HUGETLBFS_SHMEM;
    if (minor)
        api.features |= UFFD_FEATURE_MINOR_SHMEM;
    ok = ioctl(fd, UFFDIO_API, &api) == 0;
    close(fd);
    return ok;
}

/* UFFDIO_WRITEPROTECT fails while this is set. */
static int wp_fails;

static int failing_ioctl(int fd, unsigned long req, void *arg)
{
    if (wp_fails && req == UFFDIO_WRITEPROTECT) {
        errno = ENOMEM;
        return -1;
    }
    return ioctl(fd, req, arg);
}

/* As a kernel before 6.6: UFFDIO_CONTINUE knows no MODE_WP. */
static int old_continue_ioctl(int fd, unsigned long req, void *arg)
{
    if (req == UFFDIO_CONTINUE &&
        (((struct uffdio_continue *)arg)->mode & ((__u64)1 << 1)) != 0) {
        errno = EINVAL;
        return -1;
    }
    return ioctl(fd, req, arg);
}

/* Counts the userfaultfd ioctls the library makes. */
static int n_continue, n_wp;

static int counting_ioctl(int fd, unsigned long req, void *arg)
{
    n_continue += req == UFFDIO_CONTINUE;
    n_wp += req == UFFDIO_WRITEPROTECT;
    return ioctl(fd, req, arg);
}

/* Commit v into page n, and check that it reached the file. */
static int commit_page(const char *file, int n, int v)
{
    E(xbegin());
    *pg(n, READ_WRITE) = v;
    return xend() == COMMITTED &&
           tu_int_at(file, (off_t)n * PAGESIZE) == v;
}

/* In a child of its own (alone, so its pages are kept): commit page 0,
 * then write it outside any transaction. */
static void write_outside(void *arg)
{
    int *y;

    (void)arg;
    configure();
    if (xInit("ctl_out", NONDURABLE) != 0)
        _exit(3);
    y = xMmap("out.db", NPG * PAGESIZE);
    if (y == MAP_FAILED)
        _exit(4);
    x = y;
    xbegin();
    *pg(0, READ_WRITE) = 1;
    if (xend() != COMMITTED)
        _exit(5);
    *y = 77; /* kept, so readable; not writable outside a transaction */
}

/* In a child of its own, pages not kept: read page 1 in a transaction,
 * then page 1 (revoked) or, with arg set, page 2 (never touched) outside
 * any transaction. */
static void read_outside(void *arg)
{
    volatile int *y;

    configure();
    if (xInit("ctl_rd", NONDURABLE) != 0 || xSetKeepPages(0) != 1)
        _exit(3);
    y = xMmap("rd.db", NPG * PAGESIZE);
    if (y == MAP_FAILED)
        _exit(4);
    x = (int *)y;
    xbegin();
    if (rd(1) != 0 || xend() != COMMITTED)
        _exit(5);
    (void)y[(*(const int *)arg ? 2 : 1) * tu_ipp()];
    _exit(0); /* the read went unseen */
}

/* Did the write crash the child (not its set-up, which exits 3 to 5)? */
static int killed_by_fault(int st)
{
    return tu_crashed(st) &&
           !(WIFEXITED(st) && WEXITSTATUS(st) >= 3 && WEXITSTATUS(st) <= 5);
}

static void run(int uffd, int pte, int expect_wp, int expect_pte)
{
    char name[32];
    unsigned long long f;
    int i, ok, st, which;

    printf("# XAC_UFFD=%d XAC_PTE=%d\n", uffd, pte);
    snprintf(name, sizeof name, "wp%d%d.db", uffd, pte);
    cfg_uffd = uffd;
    cfg_pte = pte;
    configure();
    E(xInit("ctl", NONDURABLE));
    unsetenv("XAC_UFFD");
    unsetenv("XAC_PTE");
    /* Mapped with keeping off (as page_touch does): page-table access
     * where it is on, else plain mprotect. */
    E(xSetKeepPages(0) == 1 ? 0 : -1);
    x = xMmap(name, NPG * PAGESIZE);
    test_cond("map", x != MAP_FAILED);
    test_cond(expect_pte ? "page-table access, with pages not kept too"
                         : "with pages not kept, no write protection",
              tu_stats().uffd == expect_pte &&
                  tu_stats().page_table_access == expect_pte);
    for (which = 0; which < 2; which++) {
        st = tu_in_child(read_outside, &which);
        test_cond(which ? "a read of an untouched page outside a "
                          "transaction crashes"
                        : "a read of a revoked page outside a transaction "
                          "crashes",
                  killed_by_fault(st));
    }
    E(xSetKeepPages(1) == 0 ? 0 : -1);
    test_cond(expect_wp ? "keeping them turns write protection on"
                        : "writes are stopped by mprotect",
              tu_stats().uffd == expect_wp);

    /* Pages kept after a write, written again and again. */
    ok = 1;
    for (i = 0; i < 60; i++)
        ok = ok && commit_page(name, i % 3, i + 1);
    test_cond("60 commits to 3 kept pages all reach the file", ok);
    f = tu_stats().faults;
    test_cond("... each write after the first a fault",
              commit_page(name, 0, 100) &&
                  tu_stats().faults == f + (vg ? 0 : 1));
    E(xbegin());
    test_cond("the next transaction reads it without a fault",
              rd(0) == 100 && xend() == COMMITTED &&
                  tu_stats().faults == f + (vg ? 0 : 1));

    /* Read first, write later in the same transaction. */
    E(xbegin());
    ok = rd(5) == 0;
    *pg(5, READ_WRITE) = 55;
    test_cond("a page read, then written, commits",
              xend() == COMMITTED && ok &&
                  tu_int_at(name, 5 * PAGESIZE) == 55);

    /* An abort: the write is gone, and the page takes writes again. */
    E(xbegin());
    *pg(0, READ_WRITE) = 666;
    E(xFail());
    test_cond("a failed transaction aborts", xend() == ABORTED);
    E(xbegin());
    test_cond("its write to a kept page is gone",
              rd(0) == 100 && xend() == COMMITTED);
    test_cond("... and the page commits again", commit_page(name, 0, 101));

    /* An advisory write grant of a kept page: it is mapped already, so
     * no UFFDIO_CONTINUE (which could only fail with EEXIST), and under
     * page-table access one ioctl lifts the protection. */
    xos.ioctl = counting_ioctl;
    n_continue = n_wp = 0;
    f = tu_stats().faults;
    E(xbegin());
    ok = setPageAccess(pg(0, READ), READ_WRITE) == 0;
    x[0] = 102;
    st = n_continue == 0 && (!expect_pte || n_wp == 1);
    test_cond("setPageAccess(READ_WRITE) of a kept page: the write takes "
              "no fault and commits",
              xend() == COMMITTED && ok && tu_stats().faults == f &&
                  tu_int_at(name, 0) == 102);
    test_cond(expect_pte ? "... its grant is one UFFDIO_WRITEPROTECT"
                         : "... its grant makes no UFFDIO_CONTINUE",
              st);
    xos_reset();
    test_cond("... and the page commits again", commit_page(name, 0, 101));

    /* Revoked with its protection on, then written without a read. */
    E(xSetKeepPages(0) == 1 ? 0 : -1);
    test_cond("a write to a revoked page commits",
              commit_page(name, 1, 202));
    E(xSetKeepPages(1) == 0 ? 0 : -1);
    test_cond("... and so does the next, kept again",
              commit_page(name, 1, 203) && commit_page(name, 1, 204));

    /* The protection ioctl fails: mprotect takes over. */
    xos.ioctl = failing_ioctl;
    wp_fails = 1;
    ok = 1;
    for (i = 0; i < 12; i++)
        ok = ok && commit_page(name, 6 + i % 4, 300 + i);
    test_cond("while write protection fails, commits still reach the file",
              ok);
    wp_fails = 0;
    ok = 1;
    for (i = 0; i < 12; i++)
        ok = ok && commit_page(name, 6 + i % 4, 400 + i);
    test_cond("... and after it works again", ok);
    xos_reset();
    E(xbegin());
    ok = rd(6) == 408 && rd(7) == 409 && rd(8) == 410 && rd(9) == 411;
    test_cond("the last values are read back", xend() == COMMITTED && ok);

    /* Page-table access on a kernel without UFFDIO_CONTINUE_MODE_WP: a
     * read grant maps the page, then write-protects it, so the write that
     * follows still faults and reaches the commit. */
    if (expect_pte) {
        xos.ioctl = old_continue_ioctl;
        E(xSetKeepPages(0) == 1 ? 0 : -1);
        f = tu_stats().faults;
        E(xbegin());
        ok = rd(11) == 0;
        *pg(11, READ_WRITE) = 1111;
        test_cond("without CONTINUE_MODE_WP a page read, then written, "
                  "commits",
                  xend() == COMMITTED && ok &&
                      tu_int_at(name, 11 * PAGESIZE) == 1111 &&
                      tu_stats().faults == f + 2 && xac_env.xe_wp.wp_cont == 0);
        xos_reset();
        E(xSetKeepPages(1) == 0 ? 0 : -1);
    }

    /* Outside a transaction a kept page is not writable. */
    st = tu_in_child(write_outside, NULL);
    test_cond("a write to a kept page outside a transaction crashes",
              killed_by_fault(st));

    E(xMunmap(name));
    test_cond("page 0 in the file", tu_int_at(name, 0) == 101);
    test_cond("page 1 in the file", tu_int_at(name, PAGESIZE) == 204);
    E(xShutdown());
}

int main(void)
{
    int can, minor;

    vg = tu_valgrind();
    tu_tmpdir();
    can = kernel_can(0) && !vg;
    minor = can && kernel_can(1);
    printf("# userfaultfd write protection %s here, minor faults %s\n",
           can ? "is available" : "is not available",
           minor ? "too" : "not");
    run(1, 1, can, minor);
    run(1, 0, can, 0);
    run(0, 1, 0, 0);
    return test_report();
}
