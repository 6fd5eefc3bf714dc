/* test_44_reload_after_drop: the first write into a data file drops the
 * file's clean cached pages (they may sit in large folios, each 4 KiB
 * write into which costs several times one into a small folio) and reads
 * back the ones that were cached, so a store loaded before its first
 * writer keeps its pages in the page cache (xac_seg.c,
 * xseg_drop_cache).  Without the read-back every page came back from the
 * disk alone at its first use.
 *
 * - A control file, read and dropped with POSIX_FADV_DONTNEED by the test
 *   itself, shows whether this file system drops clean pages at all (ext4
 *   does; tmpfs keeps them, and the checks below then hold trivially).
 * - The store's file is read through a plain mmap, as the tree programs
 *   load theirs; after the first commit every page is still cached and
 *   holds what it held.
 * - With mincore refused, the first commit still drops the cache, commits
 *   and leaves the data right: the read-back is a hint.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_int.h"
#include "xac_os.h"

#define NPG 256 /* 1 MiB: a few large folios' worth */

/* Make path, NPG pages, int i at the start of page i, and read every page
 * through a plain shared mapping (readahead may give it large folios). */
static void make_and_read(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600), i;
    volatile const int *m;
    long sum = 0;

    if (fd < 0 || ftruncate(fd, (off_t)NPG * PAGESIZE) != 0)
        abort();
    for (i = 0; i < NPG; i++)
        if (pwrite(fd, &i, sizeof i, (off_t)i * PAGESIZE) != sizeof i)
            abort();
    if (fsync(fd) != 0)
        abort();
    m = mmap(NULL, (size_t)NPG * PAGESIZE, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED)
        abort();
    for (i = 0; i < NPG; i++)
        sum += m[(size_t)i * tu_ipp()];
    if (sum != (long)NPG * (NPG - 1) / 2)
        abort();
    munmap((void *)m, (size_t)NPG * PAGESIZE);
    close(fd);
}

/* Pages of path in the page cache now (mincore through a fresh mapping),
 * or -1. */
static int cached(const char *path)
{
    unsigned char vec[NPG];
    int fd = open(path, O_RDONLY), n = 0, i;
    void *m;

    if (fd < 0)
        return -1;
    m = mmap(NULL, (size_t)NPG * PAGESIZE, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return -1;
    if (mincore(m, (size_t)NPG * PAGESIZE, vec) != 0)
        n = -1;
    for (i = 0; i < NPG && n >= 0; i++)
        n += vec[i] & 1;
    munmap(m, (size_t)NPG * PAGESIZE);
    return n;
}

/* Does every page of path still hold its number (page 0: plus add)? */
static int pages_hold(const char *path, int add)
{
    int i;

    for (i = 0; i < NPG; i++)
        if (tu_int_at(path, (off_t)i * PAGESIZE) != i + (i == 0 ? add : 0))
            return 0;
    return 1;
}

static int refuse_mincore(void *addr, size_t len, unsigned char *vec)
{
    (void)addr;
    (void)len;
    (void)vec;
    errno = ENOMEM;
    return -1;
}

/* In a child: a store of its own whose first commit finds mincore
 * refused.  Exits 0 if the commit went through and the data are right, 3
 * if that file system drops pages and they were read back anyway. */
static void without_mincore(void *drops)
{
    int *x, left;

    make_and_read("e.db");
    xos_reset();
    xos.mincore = refuse_mincore;
    if (xInit("ctl2", NONDURABLE) != 0)
        _exit(1);
    x = xMmap("e.db", NPG * PAGESIZE);
    if (x == MAP_FAILED || tu_commit_add(x, 0, 5) != COMMITTED ||
        xMunmap("e.db") != 0)
        _exit(2);
    /* Before pages_hold, whose reads bring the pages back. */
    left = cached("e.db");
    if (!pages_hold("e.db", 5))
        _exit(2);
    if (*(int *)drops && left >= NPG)
        _exit(3);
    _exit(xShutdown() == 0 ? 0 : 4);
}

int main(void)
{
    int drops, *x, st, fd;

    tu_tmpdir();
    make_and_read("c.db");
    fd = open("c.db", O_RDONLY);
    test_cond("the control file is cached after its read",
              fd >= 0 && cached("c.db") == NPG);
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    drops = cached("c.db") < NPG;
    printf("# this file system %s clean pages on POSIX_FADV_DONTNEED\n",
           drops ? "drops" : "keeps");

    make_and_read("d.db");
    E(xInit("ctl", NONDURABLE));
    x = xMmap("d.db", NPG * PAGESIZE);
    if (x == MAP_FAILED)
        abort();
    test_cond("the store's file is cached after its load",
              cached("d.db") == NPG);
    test_cond("the first commit", tu_commit_add(x, 0, 7) == COMMITTED);
    test_cond("the cache was dropped (the store says so)",
              xac_env.xe_seg.sg_hdr->sh_dropped == 1);
    test_cond("every page cached before it is cached after it",
              cached("d.db") == NPG);
    E(xMunmap("d.db"));
    test_cond("and every page holds what it held, page 0 the commit's",
              pages_hold("d.db", 7));
    E(xShutdown());

    st = tu_in_child(without_mincore, &drops);
    test_cond("with mincore refused the first commit still goes through",
              WIFEXITED(st) && WEXITSTATUS(st) != 1 &&
                  WEXITSTATUS(st) != 2 && WEXITSTATUS(st) != 4);
    test_cond("and then nothing is read back (where pages are dropped)",
              WIFEXITED(st) && WEXITSTATUS(st) == 0);
    return test_report();
}
