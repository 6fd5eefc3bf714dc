/* test_41_lock_spin: a process that finds the commit lock held
 * (XAC_LOCK_SPIN_US, xac_ctl.c).
 *
 * - Without spinning (0) it sleeps until the holder lets go: xStats counts
 *   the busy lock (lock_busy) and no spin that took it (lock_spun).
 * - With spinning it takes the lock as the holder lets go, without
 *   sleeping (lock_spun), within a few tries: a try whose holder is kept
 *   off the CPU longer than the spin goes to sleep instead, which is also
 *   right, so only "never" would be a failure.
 * - A holder that dies while another process spins: the spin stops, and
 *   the lock is taken and marked for repair (ch_repair), as without it.
 * - The setting in effect is in xStats (lock_spin_us); a process that may
 *   run on one CPU only never spins (the holder could not run meanwhile).
 * No time is asserted: the holder lets go when the waiter says it is
 * about to take the lock.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_int.h"
#include "xac_os.h"

#define SPIN_TRIES 5

enum holder_end { UNLOCK, DIE };

/* A child that attaches, takes ch_lock, says 'l', and on 'g' lets go of
 * it a moment later: it unlocks, or dies holding it. */
static pid_t holder(int hear, int tell, enum holder_end end)
{
    pid_t pid;

    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        xos_reset();
        if (xInit("ctl", NONDURABLE) != 0)
            _exit(2);
        xctl_lock(&xac_env.xe_ctl);
        tu_tell(tell, 'l');
        if (tu_hear(hear) != 'g')
            _exit(3);
        usleep(300); /* the waiter is in xctl_lock by then, mostly */
        if (end == DIE)
            _exit(0); /* the kernel marks the robust lock: owner died */
        xctl_unlock(&xac_env.xe_ctl);
        E(xShutdown());
        _exit(0);
    }
    return pid;
}

/* Take ch_lock while a holder child has it (the holder ends as told),
 * and let go of it: the holder may need it to leave.  Returns whether
 * the holder exited cleanly. */
static int take_from(enum holder_end end)
{
    int down[2], up[2], ok;
    pid_t pid;

    if (pipe(down) != 0 || pipe(up) != 0)
        abort();
    pid = holder(down[0], up[1], end);
    if (tu_hear(up[0]) != 'l')
        abort();
    tu_tell(down[1], 'g');
    xctl_lock(&xac_env.xe_ctl);
    xctl_unlock(&xac_env.xe_ctl);
    ok = tu_reap(pid);
    close(down[0]);
    close(down[1]);
    close(up[0]);
    close(up[1]);
    return ok;
}

static void with_spin(const char *us)
{
    setenv("XAC_LOCK_SPIN_US", us, 1);
    E(xInit("ctl", NONDURABLE));
}

static void test_no_spin(void)
{
    struct xac_stats st;

    with_spin("0");
    test_cond("the holder let go", take_from(UNLOCK));
    st = tu_stats();
    test_cond("lock_spin_us says 0", st.lock_spin_us == 0);
    test_cond("the held lock is counted once", st.lock_busy == 1);
    test_cond("without spinning, no spin took it", st.lock_spun == 0);
    E(xShutdown());
}

static void test_spin(void)
{
    struct xac_stats st;
    int i, all_ok = 1, spins = XCTL_CAN_SPIN && xos_cpus() > 1;

    with_spin("10000"); /* 10 ms: far longer than the holder's 0.3 */
    st = tu_stats();
    test_cond("lock_spin_us says 10000 (0 on one CPU)",
              st.lock_spin_us == (spins ? 10000 : 0));
    for (i = 0; i < SPIN_TRIES; i++) {
        all_ok &= take_from(UNLOCK);
        if (tu_stats().lock_spun > 0)
            break;
    }
    st = tu_stats();
    test_cond("every holder let go", all_ok);
    test_cond("every try found the lock held",
              st.lock_busy == (unsigned long long)(i < SPIN_TRIES ? i + 1 : i));
    test_cond("a spin took the lock as the holder let go (none on one CPU)",
              st.lock_spun == (spins ? 1u : 0u));
    E(xShutdown());
}

static void test_holder_dies(void)
{
    struct xctl_hdr *h;

    with_spin("10000");
    h = xac_env.xe_ctl.cx_hdr;
    h->ch_repair = 0;
    test_cond("the holder died holding the lock", take_from(DIE));
    test_cond("the lock is taken and marked for repair", h->ch_repair == 1);
    test_cond("no spin took a dead holder's lock",
              tu_stats().lock_spun == 0);
    E(xShutdown());
}

int main(void)
{
    tu_tmpdir();
    test_no_spin();
    test_spin();
    test_holder_dies();
    unsetenv("XAC_LOCK_SPIN_US");
    return test_report();
}
