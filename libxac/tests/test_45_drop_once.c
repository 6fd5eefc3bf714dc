/* test_45_drop_once: the first write into a data file drops the file's
 * cached pages once (test_44), not again at every session's first write:
 * the last process to leave notes the file's ctime, and the next first
 * process keeps the store's "dropped" mark if nothing changed the file
 * since (xac_seg.c, drop_still_holds).  Dropping again would throw away
 * the cache of a loaded store, which the next session then reads back
 * from the disk page by page.
 *
 * - A store written in one session and left with xMunmap: the next
 *   session's first commit gives no POSIX_FADV_DONTNEED advice.
 * - A write to the file between two sessions (a plain pwrite): the next
 *   session drops the cache again.
 * - A session that ends without xMunmap (a child that exits): nothing
 *   was noted, so the next session drops again.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_int.h"
#include "xac_os.h"

#define NPG 64

static int (*real_fadvise)(int fd, off_t off, off_t len, int advice);
static int drops;

static int counting_fadvise(int fd, off_t off, off_t len, int advice)
{
    if (advice == POSIX_FADV_DONTNEED)
        drops++;
    return real_fadvise(fd, off, len, advice);
}

/* One session: map, commit page 0 += v, unmap; the DONTNEED advice it
 * gave, or -1 if something failed. */
static int session(int v)
{
    int *x, before = drops;

    if (xInit("ctl", NONDURABLE) != 0)
        return -1;
    x = xMmap("d.db", NPG * PAGESIZE);
    if (x == MAP_FAILED || tu_commit_add(x, 0, v) != COMMITTED ||
        xMunmap("d.db") != 0 || xShutdown() != 0)
        return -1;
    return drops - before;
}

/* In a child: a session that commits and exits without xMunmap. */
static void leave_without_unmap(void *arg)
{
    int *x;

    (void)arg;
    if (xInit("ctl", NONDURABLE) != 0)
        _exit(1);
    x = xMmap("d.db", NPG * PAGESIZE);
    if (x == MAP_FAILED || tu_commit_add(x, 0, 100) != COMMITTED)
        _exit(2);
    _exit(0);
}

int main(void)
{
    int fd, one = 1, st;

    tu_tmpdir();
    fd = open("d.db", O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)NPG * PAGESIZE) != 0)
        abort();
    close(fd);
    real_fadvise = xos.fadvise;
    xos.fadvise = counting_fadvise;

    test_cond("the first session's first commit drops the cache",
              session(1) == 1);
    test_cond("the next session's does not: nothing changed the file",
              session(2) == 0);
    test_cond("nor the one after it", session(3) == 0);
    test_cond("the store holds every commit",
              tu_int_at("d.db", 0) == 1 + 2 + 3);

    fd = open("d.db", O_RDWR);
    test_cond("a plain write to the file between two sessions",
              fd >= 0 && pwrite(fd, &one, sizeof one, PAGESIZE) ==
                             (ssize_t)sizeof one);
    if (fd >= 0)
        close(fd);
    test_cond("makes the next session drop the cache again",
              session(4) == 1);
    test_cond("and the one after it not", session(5) == 0);

    st = tu_in_child(leave_without_unmap, NULL);
    test_cond("a session that exits without xMunmap",
              WIFEXITED(st) && WEXITSTATUS(st) == 0);
    test_cond("makes the next one drop the cache again", session(6) == 1);
    test_cond("and the store holds every commit",
              tu_int_at("d.db", 0) == 1 + 2 + 3 + 4 + 5 + 100 + 6 &&
                  tu_int_at("d.db", PAGESIZE) == 1);
    return test_report();
}
