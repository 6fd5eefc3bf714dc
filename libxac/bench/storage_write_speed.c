/* storage_write_speed: writing a file one page at a time (table C.7).
 *
 * Each repetition seeks to the start of a file and writes --pages pages
 * (default 10,000) with one write(2) per page, without any sync, like the
 * thesis (write cache on).  Results (suite "storage", sut "os", benchmark
 * "write_speed", params pages, page_bytes):
 *   "lseek_time"    us, one lseek to offset 0 (the mean of SEEKS in a row);
 *   "write_time"    us, all pages of one repetition;
 *   "time_per_page" us, write_time / pages.
 * One sample per repetition.  The first repetition extends the file; the
 * others overwrite it in the page cache.
 */
#include "clock.h"
#include "result.h"
#include "scratch.h"
#include "storage_opts.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An lseek takes a fraction of a microsecond, about as long as reading the
 * clock twice: timed one call at a time it measured the clock, and the
 * median of a quick run's 20 moved by half from one run to the next in
 * the lab's noise recording.  Timed over SEEKS calls in a row it measures
 * the call (about 0.2 us, not 0.6-1.1) and, like any figure of that
 * size, the machine's speed (docs/change-points.md). */
#define SEEKS 1000

int main(int argc, char **argv)
{
    struct xb_storage_opts o;
    xb_storage_opts_parse(
        argc, argv,
        "Thesis table C.7: time to write a file of --pages pages, one page "
        "per write(2).",
        "files written (default 100; quick 20)",
        "pages per file (default 10000; quick 10000)", NULL, &o);
    long long reps = xb_pick(o.reps, o.quick, 20, 100);
    long long pages = xb_pick(o.pages, o.quick, 10000, 10000);
    size_t psize = (size_t)sysconf(_SC_PAGESIZE);
    const char *dir = xb_scratch_create(o.dir, "storage_write_speed");
    char path[4096];
    xb_path(path, sizeof path, dir, "pages");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        xb_die_errno("cannot create the test file");
    unsigned char *buf = malloc(psize);
    if (buf == NULL)
        xb_die_errno("malloc");

    xb_result *seek = xb_result_new("storage", "write_speed", "os",
                                    "lseek_time", "us", XB_LOWER);
    xb_result *all = xb_result_new("storage", "write_speed", "os",
                                   "write_time", "us", XB_LOWER);
    xb_result *per = xb_result_new("storage", "write_speed", "os",
                                   "time_per_page", "us", XB_LOWER);
    for (long long r = 0; r < reps; r++) {
        uint64_t t0 = xb_now_ns();
        for (int s = 0; s < SEEKS; s++)
            if (lseek(fd, 0, SEEK_SET) != 0)
                xb_die_errno("lseek");
        uint64_t t1 = xb_now_ns();
        for (long long p = 0; p < pages; p++) {
            memset(buf, (int)((p + r) & 0xff), psize);
            if (write(fd, buf, psize) != (ssize_t)psize)
                xb_die_errno("write");
        }
        uint64_t t2 = xb_now_ns();
        xb_sample(seek, (double)(t1 - t0) / 1e3 / SEEKS);
        xb_sample(all, (double)(t2 - t1) / 1e3);
        xb_sample(per, (double)(t2 - t1) / 1e3 / (double)pages);
        if ((r + 1) % 10 == 0 || r + 1 == reps)
            xb_progress((double)(r + 1) / (double)reps, "%lld of %lld files",
                        r + 1, reps);
    }
    close(fd);
    free(buf);
    xb_result *rs[] = {seek, all, per};
    for (int k = 0; k < 3; k++) {
        xb_param_int(rs[k], "pages", pages);
        xb_param_int(rs[k], "page_bytes", (long long)psize);
        xb_result_emit(rs[k]);
    }
    return 0;
}
