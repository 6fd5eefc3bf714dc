/* storage_page_pool: one mmap per page against a preallocated page pool
 * (seeds 002, Neal Walfield's ext2fs buffer experiment).
 *
 * The allocation pattern is the seed's: allocate 100 pages and write each,
 * free the first 50, allocate 50 again, free all 100; repeat until the
 * requested number of allocations is done.  "Unbuffered" (pool_pages 0)
 * mmaps every page; a pool of k pages mmaps k pages at once and hands them
 * out one by one; a free always munmaps one page.  Results (suite
 * "storage", sut "os", benchmark "page_pool", params pool_pages,
 * allocations): metric "time_per_alloc" in ns (the whole loop divided by
 * the allocations), one sample per repetition.
 */
#include "clock.h"
#include "result.h"
#include "scratch.h"
#include "storage_opts.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define ALLOCS 100

static size_t psize;
static long pool_pages;
static unsigned char *pool_next;
static long pool_left;

static void *get_page_buf(void)
{
    if (pool_pages == 0) {
        void *p = mmap(NULL, psize, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            xb_die_errno("mmap");
        return p;
    }
    if (pool_left == 0) {
        pool_next = mmap(NULL, psize * (size_t)pool_pages,
                         PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                         -1, 0);
        if (pool_next == MAP_FAILED)
            xb_die_errno("mmap");
        pool_left = pool_pages;
    }
    void *p = pool_next;
    pool_next += psize;
    pool_left--;
    return p;
}

static void free_page_buf(void *p)
{
    munmap(p, psize);
}

static void run(long long total)
{
    void *allocs[ALLOCS];
    for (long long ta = total; ta > 0; ta -= ALLOCS + ALLOCS / 2) {
        for (int i = 0; i < ALLOCS; i++)
            memset(allocs[i] = get_page_buf(), 1, psize);
        for (int i = 0; i < ALLOCS / 2; i++)
            free_page_buf(allocs[i]);
        for (int i = 0; i < ALLOCS / 2; i++)
            memset(allocs[i] = get_page_buf(), 1, psize);
        for (int i = 0; i < ALLOCS; i++)
            free_page_buf(allocs[i]);
    }
    /* give back what is left of the last pool */
    if (pool_left > 0)
        munmap(pool_next, psize * (size_t)pool_left);
    pool_left = 0;
}

int main(int argc, char **argv)
{
    static const long sizes[] = {0, 1, 2, 4, 8, 16, 24, 32, 64, 256, 1024,
                                 4096};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    struct xb_storage_opts o;
    xb_storage_opts_parse(
        argc, argv,
        "Seeds 002: page allocation with one mmap per page against pools of "
        "k pages\nmapped at once (k = 0 (one mmap per page), 1, 2, 4 ... "
        "4096).",
        "timed runs per pool size (default 10; quick 3)",
        "allocations per run (default 65536; quick 16384)", NULL, &o);
    long long reps = xb_pick(o.reps, o.quick, 3, 10);
    long long total = xb_pick(o.pages, o.quick, 16384, 65536);
    psize = (size_t)sysconf(_SC_PAGESIZE);
    /* each pass of the loop does 150 allocations */
    long long done = (total + 149) / 150 * 150;

    for (int s = 0; s < nsizes; s++) {
        pool_pages = sizes[s];
        xb_result *r = xb_result_new("storage", "page_pool", "os",
                                     "time_per_alloc", "ns", XB_LOWER);
        for (long long i = 0; i < reps; i++) {
            uint64_t t0 = xb_now_ns();
            run(total);
            xb_sample(r, (double)(xb_now_ns() - t0) / (double)done);
        }
        xb_param_int(r, "pool_pages", pool_pages);
        xb_param_int(r, "allocations", done);
        xb_result_emit(r);
        xb_progress((double)(s + 1) / nsizes, "pool of %ld pages done",
                    pool_pages);
    }
    return 0;
}
