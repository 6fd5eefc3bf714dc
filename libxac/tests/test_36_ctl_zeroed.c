/* test_36_ctl_zeroed: a control file whose header never reached the disk.
 *
 * xac.ctl is sized with ftruncate and its header written through a shared
 * mapping nobody syncs; a power cut after a later log sync can leave it
 * the right size and all zeros (the crash suite's power-loss replay found
 * this, docs/crash-consistency.md).  It holds no committed data, so xInit
 * must make it again rather than refuse the store (XAC_EBADCTL), and the
 * committed data must be there after recovery.  A header with another,
 * non-zero magic is still refused. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "support/testhelp.h"
#include "support/tutil.h"

#define NP 4

static void child_commits(void *arg)
{
    int *x;
    (void)arg;
    if (xInit("ctl", DURABLE) != 0)
        _exit(3);
    x = xMmap("d.db", NP * PAGESIZE);
    if (x == MAP_FAILED)
        _exit(4);
    if (tu_commit_add(x, 0, 41) != COMMITTED ||
        tu_commit_add(x, tu_ipp(), 1) != COMMITTED)
        _exit(5);
    _exit(0); /* no xShutdown: recovery replays the log */
}

/* Overwrite the first len bytes of the control file with byte b. */
static int scribble(unsigned char b, size_t len)
{
    unsigned char buf[256];
    int fd = open("ctl/xac.ctl", O_WRONLY);
    memset(buf, b, sizeof buf);
    int ok = fd >= 0 && len <= sizeof buf && pwrite(fd, buf, len, 0) == (ssize_t)len;
    if (fd >= 0)
        close(fd);
    return ok;
}

int main(void)
{
    int *x, w;

    tu_tmpdir();
    w = tu_in_child(child_commits, NULL);
    test_cond("a child commits twice and dies without xShutdown", w == 0);
    off_t size = tu_size("ctl/xac.ctl");
    test_cond("its control file is there", size > 0);

    test_cond("the control file's header is zeros", scribble(0, 256));
    test_cond("xInit makes the control file again",
              xInit("ctl", DURABLE) == 0);
    x = xMmap("d.db", NP * PAGESIZE);
    test_cond("xMmap after it", x != MAP_FAILED);
    test_cond("the control file has its old size", tu_size("ctl/xac.ctl") == size);
    test_cond("xMunmap and xShutdown",
              x != MAP_FAILED && xMunmap("d.db") == 0 && xShutdown() == 0);
    test_cond("recovery kept both commits",
              tu_int_at("d.db", 0) == 41 &&
                  tu_int_at("d.db", (off_t)(tu_ipp() * sizeof(int))) == 1);

    test_cond("a header with another magic", scribble(0x5a, 8));
    test_cond("is still refused", xInit("ctl", DURABLE) == XAC_EBADCTL);
    return test_report();
}
