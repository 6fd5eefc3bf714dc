/* storage_msync_fsync: the cost of making one modified page durable.
 *
 * Thesis table 4.8 / C.6: a file of 10,000 pages is memory-mapped; each
 * repetition increments the first int of one page chosen uniformly at
 * random, then times msync(MS_ASYNC) on that page and fsync on the file,
 * separately.  Results (suite "storage", sut "os", benchmark
 * "msync_fsync"): metric "msync_async_time" and "fsync_time", in us, one
 * sample per repetition.
 */
#include "clock.h"
#include "result.h"
#include "scratch.h"
#include "storage_opts.h"
#include "workload.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void fill_file(int fd, long long pages, size_t psize)
{
    unsigned char *buf = calloc(1, psize);
    if (buf == NULL)
        xb_die_errno("calloc");
    for (long long p = 0; p < pages; p++) {
        memset(buf, (int)(p & 0xff), psize);
        if (pwrite(fd, buf, psize, (off_t)p * (off_t)psize) != (ssize_t)psize)
            xb_die_errno("cannot write the test file");
    }
    free(buf);
    if (fsync(fd) != 0)
        xb_die_errno("fsync");
}

int main(int argc, char **argv)
{
    struct xb_storage_opts o;
    xb_storage_opts_parse(
        argc, argv,
        "Thesis table 4.8/C.6: modify one random page of a memory-mapped file,"
        "\nthen time msync(MS_ASYNC) and fsync separately.",
        "modifications timed (default 1000; quick 100)",
        "pages in the file (default 10000; quick 1000)", NULL, &o);
    long long reps = xb_pick(o.reps, o.quick, 100, 1000);
    long long pages = xb_pick(o.pages, o.quick, 1000, 10000);
    size_t psize = (size_t)sysconf(_SC_PAGESIZE);
    const char *dir = xb_scratch_create(o.dir, "storage_msync_fsync");
    char path[4096];
    xb_path(path, sizeof path, dir, "data");

    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        xb_die_errno("cannot create the test file");
    fill_file(fd, pages, psize);
    unsigned char *map = mmap(NULL, (size_t)pages * psize,
                              PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        xb_die_errno("mmap");

    xb_result *rm = xb_result_new("storage", "msync_fsync", "os",
                                  "msync_async_time", "us", XB_LOWER);
    xb_result *rf = xb_result_new("storage", "msync_fsync", "os",
                                  "fsync_time", "us", XB_LOWER);
    struct xb_rng rng;
    xb_rng_seed(&rng, XB_WORKLOAD_SEED);
    for (long long i = 0; i < reps; i++) {
        unsigned char *page = map + xb_rng_below(&rng, (uint64_t)pages) * psize;
        (*(volatile int *)page)++;
        uint64_t t0 = xb_now_ns();
        if (msync(page, psize, MS_ASYNC) != 0)
            xb_die_errno("msync");
        uint64_t t1 = xb_now_ns();
        if (fsync(fd) != 0)
            xb_die_errno("fsync");
        uint64_t t2 = xb_now_ns();
        xb_sample(rm, (double)(t1 - t0) / 1e3);
        xb_sample(rf, (double)(t2 - t1) / 1e3);
        if ((i + 1) % 100 == 0 || i + 1 == reps)
            xb_progress((double)(i + 1) / (double)reps, "%lld of %lld pages synced",
                        i + 1, reps);
    }
    munmap(map, (size_t)pages * psize);
    close(fd);

    xb_result *rs[] = {rm, rf};
    for (int k = 0; k < 2; k++) {
        xb_param_int(rs[k], "pages", pages);
        xb_param_int(rs[k], "page_bytes", (long long)psize);
        xb_result_emit(rs[k]);
    }
    return 0;
}
