/* test_05_faults: real bugs still crash; failed system calls surface. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_os.h"

static int *seg;
static volatile int sink;

static void touch_outside_txn(void *arg)
{
    (void)arg;
    sink = seg[0];
}

static void touch_unmapped_in_txn(void *arg)
{
    volatile int *p = arg;
    xbegin();
    sink = *p;
}

static void write_in_query(void *arg)
{
    (void)arg;
    xbeginQuery();
    seg[10] = 1;
}

static ssize_t eio_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    (void)fd;
    (void)buf;
    (void)n;
    (void)off;
    errno = EIO;
    return -1;
}

/* The data file's access hints, recorded, and refused: a hint that fails
 * must not fail xMmap.  The read-back of the pages a drop found cached
 * (POSIX_FADV_WILLNEED) is test_44's. */
static int random_fd = -1, dropped_fd = -1, other_advice = 0;
static int refuse_fadvise(int fd, off_t off, off_t len, int advice)
{
    if (advice == POSIX_FADV_RANDOM && off == 0 && len == 0)
        random_fd = fd;
    else if (advice == POSIX_FADV_DONTNEED && off == 0 && len == 0)
        dropped_fd = fd;
    else if (advice != POSIX_FADV_WILLNEED || dropped_fd < 0)
        other_advice++;
    return EINVAL;
}

static int same_file(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino &&
           a.st_dev == b.st_dev;
}

int main(void)
{
    void *hole;
    int st;

    tu_tmpdir();
    E(xInit(".", NONDURABLE));
    seg = xMmap("t.db", 4 * PAGESIZE);
    if (seg == MAP_FAILED)
        abort();
    hole = mmap(NULL, PAGESIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    st = tu_in_child(touch_outside_txn, NULL);
    test_cond("touching the segment outside a transaction crashes",
              tu_crashed(st));
    st = tu_in_child(touch_unmapped_in_txn, hole);
    test_cond("a bad address inside a transaction still crashes",
              tu_crashed(st));
    st = tu_in_child(write_in_query, NULL);
    test_cond("writing in a read-only transaction crashes", tu_crashed(st));

    xos.pwrite = eio_pwrite;
    E(xbegin());
    seg[0] = 5;
    test_cond("xend reports a failed write-back", xend() == EIO);
    xos_reset();
    test_cond("the transaction is over after the error",
              xend() == XAC_ENOTXN);
    E(xbegin());
    test_cond("the failed commit's private copy is gone",
              seg[0] == 0 && xend() == COMMITTED);
    E(xShutdown());

    E(xInit(".", NONDURABLE));
    xos.fadvise = refuse_fadvise;
    seg = xMmap("u.db", 4 * PAGESIZE);
    test_cond("xMmap succeeds although its access hint fails",
              seg != MAP_FAILED);
    test_cond("xMmap asks for random access on the data file",
              same_file(random_fd, "u.db"));
    test_cond("mapping the file keeps its cached pages", dropped_fd < 0);
    if (seg != MAP_FAILED) {
        E(xbeginQuery());
        test_cond("reading it keeps them too",
                  seg[1] == 0 && xendQuery() == COMMITTED && dropped_fd < 0);
        E(xbegin());
        seg[1] = 9;
        test_cond("the segment works after the failed hint",
                  xend() == COMMITTED);
        test_cond("the first commit into the file drops its cached pages",
                  same_file(dropped_fd, "u.db") && other_advice == 0);
        dropped_fd = -1;
        E(xbegin());
        seg[2] = 7;
        test_cond("later commits do not", xend() == COMMITTED &&
                                              dropped_fd < 0);
    }
    xos_reset();
    E(xShutdown());
    test_cond("the commit reached the data file",
              tu_int_at("u.db", sizeof(int)) == 9);
    munmap(hole, PAGESIZE);
    return test_report();
}
