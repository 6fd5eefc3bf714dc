/* test_procs: the process group every multi-process benchmark runs
 * (bench/common/procs.h): children are released together only when every
 * one said it is ready, a refusal or an early death stops them all without
 * leaving the parent waiting, exits and CPU time are recorded, and what the
 * children write in shared memory reaches the parent. */
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "procs.h"
#include "support/testhelp.h"

#define N 4
#define RAN 1     /* the body went past xb_proc_ready */
#define STOPPED 2 /* it was told to stop */

/* What each child does before it says ready. */
enum plan { READY, REFUSE, DIE_EARLY, FAIL_AFTER, SPIN };

struct arg {
    enum plan plan[N];
    int *seen; /* shared: RAN or STOPPED per child */
};

static void spin_cpu(void)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    do
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) <
           50000000L);
}

static int body(const struct xb_proc *self, int k, void *argp)
{
    const struct arg *a = argp;
    switch (a->plan[k]) {
    case DIE_EARLY:
        return 7;
    case REFUSE:
        xb_proc_ready(self, 'b');
        return 0;
    default:
        break;
    }
    if (!xb_proc_ready(self, XB_PROC_READY)) {
        a->seen[k] = STOPPED;
        return 0;
    }
    a->seen[k] = RAN;
    if (a->plan[k] == SPIN)
        spin_cpu();
    return a->plan[k] == FAIL_AFTER ? 3 : 0;
}

static int count(const int *seen, int what)
{
    int n = 0;
    for (int k = 0; k < N; k++)
        n += seen[k] == what;
    return n;
}

int main(void)
{
    struct arg a;
    struct xb_procs g;
    a.seen = xb_shared_new(N * sizeof *a.seen);

    for (int k = 0; k < N; k++)
        a.plan[k] = READY;
    a.plan[2] = SPIN;
    int ready = xb_procs_run(&g, N, body, &a);
    test_cond("every child says it is ready", ready == N &&
              xb_procs_said(&g, XB_PROC_READY) == N);
    test_cond("all are released and run", count(a.seen, RAN) == N);
    test_cond("none failed", g.nfailed == 0);
    test_cond("the clock stops after it starts", g.end_ns >= g.start_ns);
    test_cond("the children's CPU time is counted", g.user_s + g.sys_s > 0);

    memset(a.seen, 0, N * sizeof *a.seen);
    a.plan[2] = REFUSE;
    ready = xb_procs_run(&g, N, body, &a);
    test_cond("a refusal is heard", ready == N - 1 &&
              xb_procs_said(&g, 'b') == 1);
    test_cond("and every other child is told to stop",
              count(a.seen, STOPPED) == N - 1 && count(a.seen, RAN) == 0);
    test_cond("stopping is not failing", g.nfailed == 0);

    memset(a.seen, 0, N * sizeof *a.seen);
    a.plan[2] = DIE_EARLY;
    ready = xb_procs_run(&g, N, body, &a);
    test_cond("a child that dies before it speaks does not hang the parent",
              ready == N - 1 && count(a.seen, STOPPED) == N - 1);
    test_cond("its exit is recorded", g.failed[2] && g.nfailed == 1);

    memset(a.seen, 0, N * sizeof *a.seen);
    a.plan[2] = FAIL_AFTER;
    ready = xb_procs_run(&g, N, body, &a);
    test_cond("a child that fails after the start ran with the others",
              ready == N && count(a.seen, RAN) == N);
    test_cond("its exit is recorded", g.failed[2] && g.nfailed == 1 &&
              !g.failed[0] && !g.failed[3]);

    xb_shared_free(a.seen, N * sizeof *a.seen);
    return test_report();
}
