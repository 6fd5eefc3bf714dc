/* clock.h: the timers every benchmark program uses. */
#ifndef XB_CLOCK_H
#define XB_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Monotonic nanoseconds. */
static inline uint64_t xb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
