/* test_16_settle: xb_settle (bench/common/scratch.h), which the search-tree
 * benchmarks call before they start the clock.
 *
 * After 64 MiB of buffered writes into a file under the directory, the
 * system's dirty page count (/proc/meminfo "Dirty:") must drop by at least
 * half of that once xb_settle returns: the writes of whatever ran before a
 * measurement are on disk, not waiting for the flusher during it.  Half,
 * not all, because other processes may dirty pages meanwhile.  Also: a
 * path that is not a directory gives an errno value and changes nothing. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scratch.h"
#include "support/testhelp.h"
#include "support/tutil.h"

#define MIB (1024L * 1024L)
#define WRITE_MIB 64

/* The kernel's count of dirty pages, in KiB; -1 if unreadable. */
static long dirty_kib(void)
{
    char line[256];
    long v = -1;
    FILE *f = fopen("/proc/meminfo", "r");

    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "Dirty: %ld kB", &v) == 1)
            break;
    fclose(f);
    return v;
}

int main(void)
{
    static char buf[MIB];
    long before, after;
    int fd, i, ok = 1;

    tu_tmpdir();
    memset(buf, 0x5a, sizeof buf);
    fd = open("dirty.bin", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    E(fd < 0 ? -1 : 0);
    for (i = 0; i < WRITE_MIB && ok; i++)
        ok = write(fd, buf, sizeof buf) == (ssize_t)sizeof buf;
    E(close(fd));
    test_cond("64 MiB written through the page cache", ok);
    before = dirty_kib();
    test_cond("/proc/meminfo counts dirty pages", before >= 0);
    printf("# dirty before: %ld KiB\n", before);
    test_cond("xb_settle on the directory returns 0", xb_settle(".") == 0);
    after = dirty_kib();
    printf("# dirty after: %ld KiB\n", after);
    test_cond("... and at least half of the 64 MiB is no longer dirty",
              after >= 0 && before - after >= WRITE_MIB * 1024L / 2);
    test_cond("xb_settle on a file that is not a directory: ENOTDIR",
              xb_settle("dirty.bin") == ENOTDIR);
    test_cond("xb_settle on a missing path: ENOENT",
              xb_settle("no-such-dir") == ENOENT);
    E(unlink("dirty.bin"));
    return test_report();
}
