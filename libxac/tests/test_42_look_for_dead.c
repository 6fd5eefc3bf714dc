/* test_42_look_for_dead: commits look for dead processes outside the
 * commit lock, a few slots at a time.
 *
 * - With only live processes beside it, a process that commits asks about
 *   them (kill(pid, 0) and /proc) only without ch_lock, and at most
 *   XCM_LOOK_SLOTS of them every 256th commit: a reap of every slot
 *   under the lock every 256th commit of each of 64 processes held every
 *   writer up and cost 5 to 10 % of the nondurable throughput.
 * - A process that died without xShutdown is still found by the commits
 *   of another, and its slot freed, even with more slots than one look
 *   covers.
 */
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_int.h"
#include "xac_os.h"

#define FILE_ "d.db"
#define NPG 4
#define STAYERS 11      /* more than one look covers (8 slots) */
#define LOOK_EVERY 256  /* xac_commit.c, XCM_LOOK_EVERY */
#define LOOK_SLOTS 8    /* xac_commit.c, XCM_LOOK_SLOTS */
#define COMMITS (4 * LOOK_EVERY)

static struct xctl_hdr *hdr; /* the library's mapping of the control file */
static int nkill, nkill_locked;

/* Does this thread hold ch_lock?  glibc keeps the owner's thread id in
 * the mutex (the library's lock spin reads the same layout). */
static int lock_is_mine(void)
{
#ifdef __GLIBC__
    return __atomic_load_n(&hdr->ch_lock.__data.__owner, __ATOMIC_ACQUIRE) ==
           (int)gettid();
#else
    return 0;
#endif
}

static int count_kill(pid_t pid, int sig)
{
    nkill++;
    if (lock_is_mine())
        nkill_locked++;
    return kill(pid, sig);
}

static int slot_state_of(pid_t pid)
{
    struct xctl_slot *s = xctl_slots(&xac_env.xe_ctl);
    uint32_t i;

    for (i = 0; i < hdr->ch_nslots; i++)
        if (__atomic_load_n(&s[i].cs_pid, __ATOMIC_ACQUIRE) == pid)
            return (int)__atomic_load_n(&s[i].cs_state, __ATOMIC_ACQUIRE);
    return XS_FREE;
}

/* A child that takes a slot, says 'r', and then either waits for a byte
 * and leaves (die == 0) or dies at once without xShutdown (die == 1). */
static pid_t child(int hear, int tell, int die)
{
    pid_t pid;

    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        xos_reset();
        if (xInit("ctl", NONDURABLE) != 0)
            _exit(3);
        tu_tell(tell, 'r');
        if (die)
            _exit(0); /* the slot stays taken */
        (void)tu_hear(hear);
        _exit(xShutdown() == 0 ? 0 : 2);
    }
    return pid;
}

static int commit_many(int *x, int n)
{
    int i, ok = 1;

    for (i = 0; i < n; i++)
        ok &= tu_commit_add(x, 0, 1) == COMMITTED;
    return ok;
}

int main(void)
{
    int down[2], up[2], *x, k, ok = 1;
    pid_t stay[STAYERS], dead;

    x = tu_store_with_pipes(FILE_, NPG, down, up);
    hdr = xac_env.xe_ctl.cx_hdr;
    for (k = 0; k < STAYERS; k++) {
        stay[k] = child(down[0], up[1], 0);
        ok &= tu_hear(up[0]) == 'r';
    }
    test_cond("live processes took slots beside ours", ok);

    xos.kill = count_kill;
    test_cond("commits beside them", commit_many(x, COMMITS));
    xos_reset();
#ifdef __GLIBC__
    test_cond("they looked for dead processes", nkill > 0);
    test_cond("never while holding the commit lock", nkill_locked == 0);
#endif
    test_cond("at most 8 slots every 256th commit",
              nkill <= COMMITS / LOOK_EVERY * LOOK_SLOTS);

    dead = child(down[0], up[1], 1);
    test_cond("a child takes a slot", tu_hear(up[0]) == 'r');
    test_cond("and dies without leaving", tu_reap(dead));
    test_cond("its slot still says it lives", slot_state_of(dead) == XS_LIVE);
    test_cond("commits after its death", commit_many(x, COMMITS));
    test_cond("found it: its slot is free", slot_state_of(dead) == XS_FREE);

    for (k = 0; k < STAYERS; k++)
        tu_tell(down[1], 'q');
    for (k = 0, ok = 1; k < STAYERS; k++)
        ok &= tu_reap(stay[k]);
    test_cond("the live ones leave cleanly", ok);
    E(xMunmap(FILE_));
    test_cond("and every commit is in the file",
              tu_int_at(FILE_, 0) == 2 * COMMITS);
    E(xShutdown());
    return test_report();
}
