/* storage_syscalls: the operating-system costs under every LIBXAC page
 * access (thesis section 4.2.3, tables 4.3-4.5, C.3-C.4).
 *
 * Each repetition, all times in ns from CLOCK_MONOTONIC:
 *  - benchmark "sigsegv_roundtrip" (table 4.3/C.3): one page of a file,
 *    mapped PROT_NONE, is incremented; the SIGSEGV handler maps it
 *    read-write with mmap(MAP_FIXED) and returns.  Metrics
 *    "segv_enter_time" (access to first handler instruction), "mmap_time"
 *    (the mmap inside the handler), "segv_exit_time" (handler return to
 *    the instruction after the access).  The page is then mapped PROT_NONE
 *    again, standing for the thesis's munmap.
 *  - benchmark "mprotect": "mprotect_time" of PROT_NONE -> read-write on a
 *    mapped page (the cheaper alternative to the handler's mmap).
 *  - benchmark "first_touch" (table 4.4): "first_touch_time" of the first
 *    increment of a freshly mmap'ed file page (a page fault on a page that
 *    is in the page cache).
 *  - benchmark "memcpy_page" (table 4.5/C.4): "memcpy_time" of a 4 KiB
 *    memcpy between two fresh, untouched anonymous pages, with param copy =
 *    "first" (includes the page faults, as the thesis's first memcpy
 *    between static arrays did), "second_to_fifth" (mean of copies 2-5) and
 *    "repeated" (mean over the next 1,000 copies).
 */
#include "clock.h"
#include "result.h"
#include "scratch.h"
#include "storage_opts.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define BARRIER() __asm__ volatile("" ::: "memory")

static size_t psize;
static int page_fd;
static unsigned char *fault_page;
static volatile uint64_t t_access, t_enter, t_mmap_done, t_leave;

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    uint64_t enter = xb_now_ns();
    unsigned char *addr = si->si_addr;
    if (addr < fault_page || addr >= fault_page + psize) {
        signal(sig, SIG_DFL);
        return; /* the fault repeats and kills us with the default action */
    }
    void *p = mmap(fault_page, psize, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_FIXED, page_fd, 0);
    uint64_t done = xb_now_ns();
    if (p == MAP_FAILED)
        abort();
    t_enter = enter;
    t_mmap_done = done;
    t_leave = xb_now_ns();
}

static void protect_none(void)
{
    if (mmap(fault_page, psize, PROT_NONE, MAP_SHARED | MAP_FIXED, page_fd,
             0) == MAP_FAILED)
        xb_die_errno("mmap PROT_NONE");
}

static void sigsegv_roundtrip(long long reps)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, NULL) != 0)
        xb_die_errno("sigaction");
    fault_page = mmap(NULL, psize, PROT_NONE, MAP_SHARED, page_fd, 0);
    if (fault_page == MAP_FAILED)
        xb_die_errno("mmap");

    xb_result *enter = xb_result_new("storage", "sigsegv_roundtrip", "os",
                                     "segv_enter_time", "ns", XB_LOWER);
    xb_result *map = xb_result_new("storage", "sigsegv_roundtrip", "os",
                                   "mmap_time", "ns", XB_LOWER);
    xb_result *leave = xb_result_new("storage", "sigsegv_roundtrip", "os",
                                     "segv_exit_time", "ns", XB_LOWER);
    for (long long i = 0; i < reps; i++) {
        t_access = xb_now_ns();
        BARRIER();
        (*(volatile int *)fault_page)++;
        BARRIER();
        uint64_t back = xb_now_ns();
        xb_sample(enter, (double)(t_enter - t_access));
        xb_sample(map, (double)(t_mmap_done - t_enter));
        xb_sample(leave, (double)(back - t_leave));
        protect_none();
    }
    xb_result_emit(enter);
    xb_result_emit(map);
    xb_result_emit(leave);
    munmap(fault_page, psize);
    signal(SIGSEGV, SIG_DFL);
}

static void mprotect_cost(long long reps)
{
    unsigned char *p = mmap(NULL, psize, PROT_NONE, MAP_SHARED, page_fd, 0);
    if (p == MAP_FAILED)
        xb_die_errno("mmap");
    xb_result *r = xb_result_new("storage", "mprotect", "os", "mprotect_time",
                                 "ns", XB_LOWER);
    for (long long i = 0; i < reps; i++) {
        uint64_t t0 = xb_now_ns();
        if (mprotect(p, psize, PROT_READ | PROT_WRITE) != 0)
            xb_die_errno("mprotect");
        uint64_t t1 = xb_now_ns();
        (*(volatile int *)p)++;
        if (mprotect(p, psize, PROT_NONE) != 0)
            xb_die_errno("mprotect");
        xb_sample(r, (double)(t1 - t0));
    }
    xb_param_str(r, "from", "none");
    xb_param_str(r, "to", "read_write");
    xb_result_emit(r);
    munmap(p, psize);
}

static void first_touch(long long reps)
{
    xb_result *r = xb_result_new("storage", "first_touch", "os",
                                 "first_touch_time", "ns", XB_LOWER);
    for (long long i = 0; i < reps; i++) {
        unsigned char *p = mmap(NULL, psize, PROT_READ | PROT_WRITE,
                                MAP_SHARED, page_fd, 0);
        if (p == MAP_FAILED)
            xb_die_errno("mmap");
        uint64_t t0 = xb_now_ns();
        BARRIER();
        (*(volatile int *)p)++;
        BARRIER();
        uint64_t t1 = xb_now_ns();
        xb_sample(r, (double)(t1 - t0));
        munmap(p, psize);
    }
    xb_param_str(r, "access", "write");
    xb_result_emit(r);
}

static uint64_t timed_copy(unsigned char *dst, const unsigned char *src)
{
    uint64_t t0 = xb_now_ns();
    BARRIER();
    memcpy(dst, src, psize);
    __asm__ volatile("" : : "r"(dst) : "memory");
    return xb_now_ns() - t0;
}

static void memcpy_page(long long reps)
{
    xb_result *first = xb_result_new("storage", "memcpy_page", "os",
                                     "memcpy_time", "ns", XB_LOWER);
    xb_result *next4 = xb_result_new("storage", "memcpy_page", "os",
                                     "memcpy_time", "ns", XB_LOWER);
    xb_result *many = xb_result_new("storage", "memcpy_page", "os",
                                    "memcpy_time", "ns", XB_LOWER);
    for (long long i = 0; i < reps; i++) {
        unsigned char *a = mmap(NULL, 2 * psize, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (a == MAP_FAILED)
            xb_die_errno("mmap");
        unsigned char *src = a, *dst = a + psize;
        xb_sample(first, (double)timed_copy(dst, src));
        uint64_t sum = 0;
        for (int k = 0; k < 4; k++)
            sum += timed_copy(dst, src);
        xb_sample(next4, (double)sum / 4.0);
        uint64_t t0 = xb_now_ns();
        for (int k = 0; k < 1000; k++) {
            memcpy(dst, src, psize);
            __asm__ volatile("" : : "r"(dst) : "memory");
        }
        xb_sample(many, (double)(xb_now_ns() - t0) / 1000.0);
        munmap(a, 2 * psize);
    }
    xb_param_str(first, "copy", "first");
    xb_param_str(next4, "copy", "second_to_fifth");
    xb_param_str(many, "copy", "repeated");
    xb_param_int(many, "copies", 1000);
    xb_result *rs[] = {first, next4, many};
    for (int k = 0; k < 3; k++) {
        xb_param_int(rs[k], "page_bytes", (long long)psize);
        xb_result_emit(rs[k]);
    }
}

int main(int argc, char **argv)
{
    struct xb_storage_opts o;
    xb_storage_opts_parse(
        argc, argv,
        "Thesis tables 4.3-4.5: SIGSEGV handler entry and exit, mmap in the "
        "handler,\nmprotect, first-touch page fault, memcpy of a page.",
        "repetitions of each measurement (default 10000; quick 1000)", NULL,
        NULL, &o);
    long long reps = xb_pick(o.reps, o.quick, 1000, 10000);
    psize = (size_t)sysconf(_SC_PAGESIZE);
    const char *dir = xb_scratch_create(o.dir, "storage_syscalls");
    char path[4096];
    xb_path(path, sizeof path, dir, "page");
    page_fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (page_fd < 0 || ftruncate(page_fd, (off_t)psize) != 0)
        xb_die_errno("cannot create the test file");

    sigsegv_roundtrip(reps);
    xb_progress(0.25, "sigsegv roundtrip done");
    mprotect_cost(reps);
    xb_progress(0.5, "mprotect done");
    first_touch(reps);
    xb_progress(0.75, "first touch done");
    memcpy_page(reps);
    xb_progress(1.0, "memcpy done");
    close(page_fd);
    return 0;
}
