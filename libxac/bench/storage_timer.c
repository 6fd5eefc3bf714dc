/* storage_timer: the resolution of the clocks (thesis tables C.1, C.2).
 *
 * Each repetition reads a clock twice in a row and records the
 * difference.  Results (suite "storage", sut "os", benchmark "timer",
 * metric "timer_delta", param timer):
 *   rdtsc                    cycles (unit "count"); x86 only
 *   clock_gettime_monotonic  ns (what every xaclab benchmark uses)
 *   gettimeofday             us (what the thesis used for durable runs)
 */
#include "clock.h"
#include "result.h"
#include "scratch.h"
#include "storage_opts.h"

#include <stdio.h>
#include <sys/time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_RDTSC 1
#endif

static xb_result *new_result(const char *timer, const char *unit)
{
    xb_result *r = xb_result_new("storage", "timer", "os", "timer_delta",
                                 unit, XB_LOWER);
    xb_param_str(r, "timer", timer);
    return r;
}

int main(int argc, char **argv)
{
    struct xb_storage_opts o;
    xb_storage_opts_parse(
        argc, argv,
        "Thesis tables C.1-C.2: the delay between two successive reads of "
        "rdtsc,\nclock_gettime(CLOCK_MONOTONIC) and gettimeofday.",
        "pairs of reads per clock (default 10000; quick 10000)", NULL, NULL,
        &o);
    long long reps = xb_pick(o.reps, o.quick, 10000, 10000);

#ifdef HAVE_RDTSC
    xb_result *tsc = new_result("rdtsc", "count");
    for (long long i = 0; i < reps; i++) {
        unsigned long long a = __rdtsc();
        unsigned long long b = __rdtsc();
        xb_sample(tsc, (double)(b - a));
    }
    xb_result_emit(tsc);
#else
    fprintf(stderr, "storage_timer: no rdtsc on this architecture; no result "
                    "for it.\n");
#endif
    xb_result *mono = new_result("clock_gettime_monotonic", "ns");
    for (long long i = 0; i < reps; i++) {
        uint64_t a = xb_now_ns();
        uint64_t b = xb_now_ns();
        xb_sample(mono, (double)(b - a));
    }
    xb_result_emit(mono);
    xb_result *tod = new_result("gettimeofday", "us");
    for (long long i = 0; i < reps; i++) {
        struct timeval a, b;
        gettimeofday(&a, NULL);
        gettimeofday(&b, NULL);
        xb_sample(tod, (double)(b.tv_sec - a.tv_sec) * 1e6 +
                           (double)(b.tv_usec - a.tv_usec));
    }
    xb_result_emit(tod);
    xb_progress(1.0, "timers done");
    return 0;
}
