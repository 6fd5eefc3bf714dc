/* test_40_leave: leaving a segment that other processes share.
 *
 * - A process that leaves others behind neither syncs the data file nor
 *   asks about every other process: its xMunmap and xShutdown look for
 *   one live process that has the segment mapped and stop there (64
 *   processes that left asking about each other read /proc 4,000 times).
 * - Its commit is not lost: the last process to leave writes it into the
 *   file and syncs it.
 * - A dead process that still says it has the segment mapped does not
 *   make the last live one think it is not last: the dead slot is freed
 *   on the way, and the file is written back and synced.
 */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_ctl.h"
#include "xac_os.h"

#define NPG 8
#define STAYERS 6
#define FILE_ "l.db"

static int nsync, nkill;

static int count_sync(int fd)
{
    nsync++;
    return fdatasync(fd);
}

static int count_kill(pid_t pid, int sig)
{
    nkill++;
    return kill(pid, sig);
}

static int *attach(void)
{
    int *x;

    E(xInit("ctl", NONDURABLE));
    x = xMmap(FILE_, NPG * PAGESIZE);
    if (x == MAP_FAILED)
        abort();
    return x;
}

/* A child that maps the segment, says 'm' and stays until it hears 'q'
 * (then leaves: xMunmap, xShutdown, and says how many syncs that took)
 * or 'k' (then dies mapped, without leaving). */
static pid_t stayer(int hear, int tell)
{
    pid_t pid;

    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        char c;
        xos_reset();
        attach();
        tu_tell(tell, 'm');
        c = tu_hear(hear);
        if (c == 'k')
            _exit(0); /* mapped, and gone */
        xos.fdatasync = count_sync;
        if (xMunmap(FILE_) != 0 || xShutdown() != 0)
            _exit(2);
        tu_tell(tell, (char)('0' + (nsync > 9 ? 9 : nsync)));
        _exit(0);
    }
    return pid;
}

static int slot_state_of(pid_t pid)
{
    struct xctl_hdr h;
    struct xctl_slot s;
    uint32_t i;

    if (tu_read("ctl/xac.ctl", &h, sizeof h, 0) != (ssize_t)sizeof h)
        return -1;
    for (i = 0; i < h.ch_nslots; i++) {
        off_t at = (off_t)(h.ch_slotoff + i * sizeof s);
        if (tu_read("ctl/xac.ctl", &s, sizeof s, at) != (ssize_t)sizeof s)
            return -1;
        if (s.cs_pid == pid)
            return (int)s.cs_state;
    }
    return XS_FREE;
}

/* STAYERS children map the segment; we commit and leave before them. */
static void leave_first(void)
{
    int down[STAYERS][2], up[2], ok = 1, last_syncs, k;
    pid_t pid[STAYERS];
    char c;
    int *x;

    if (pipe(up) != 0)
        abort();
    for (k = 0; k < STAYERS; k++) {
        if (pipe(down[k]) != 0)
            abort();
        pid[k] = stayer(down[k][0], up[1]);
        ok &= tu_hear(up[0]) == 'm';
    }
    test_cond("the other processes have the segment mapped", ok);

    x = attach();
    test_cond("a commit beside them",
              tu_commit_add(x, tu_ipp() * 3, 4242) == COMMITTED);
    nsync = nkill = 0;
    xos.fdatasync = count_sync;
    xos.kill = count_kill;
    E(xMunmap(FILE_));
    E(xShutdown());
    xos_reset();
    test_cond("leaving before the others does not sync the data file",
              nsync == 0);
    test_cond("nor ask about each of them (one live one is enough)",
              nkill == 1);

    /* The others leave one by one; only the last syncs. */
    for (k = 0; k < STAYERS - 1; k++) {
        tu_tell(down[k][1], 'q');
        c = tu_hear(up[0]);
        ok &= c == '0';
        ok &= tu_reap(pid[k]);
    }
    test_cond("no process that leaves others behind syncs", ok);
    tu_tell(down[STAYERS - 1][1], 'q');
    c = tu_hear(up[0]);
    last_syncs = c >= '0' && c <= '9' ? c - '0' : -1;
    test_cond("the last to leave syncs the file", last_syncs >= 1);
    test_cond("and exits cleanly", tu_reap(pid[STAYERS - 1]));
    test_cond("the commit of the first to leave is in the file",
              tu_int_at(FILE_, 3 * PAGESIZE) == 4242);
    for (k = 0; k < STAYERS; k++) {
        close(down[k][0]);
        close(down[k][1]);
    }
    close(up[0]);
    close(up[1]);
}

/* A child maps the segment and dies mapped; we are the last live one. */
static void outlive_the_dead(void)
{
    int down[2], up[2], *x;
    pid_t pid;

    if (pipe(down) != 0 || pipe(up) != 0)
        abort();
    pid = stayer(down[0], up[1]);
    test_cond("a child maps the segment", tu_hear(up[0]) == 'm');
    x = attach();
    test_cond("a commit while it has it mapped",
              tu_commit_add(x, tu_ipp() * 5, 777) == COMMITTED);
    tu_tell(down[1], 'k');
    test_cond("the child dies mapped", tu_reap(pid));
    test_cond("its slot still says it lives", slot_state_of(pid) == XS_LIVE);
    nsync = 0;
    xos.fdatasync = count_sync;
    E(xMunmap(FILE_));
    xos_reset();
    test_cond("the last live process to leave syncs the file", nsync >= 1);
    test_cond("its commit is in the file",
              tu_int_at(FILE_, 5 * PAGESIZE) == 777);
    test_cond("the dead child's slot is freed on the way",
              slot_state_of(pid) == XS_FREE);
    E(xShutdown());
    close(down[0]);
    close(down[1]);
    close(up[0]);
    close(up[1]);
}

int main(void)
{
    tu_tmpdir();
    leave_first();
    outlive_the_dead();
    return test_report();
}
