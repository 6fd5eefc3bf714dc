/* test_06_control: the shared control file: magic, format, process slots
 * and dead-process detection. */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_ctl.h"

static void die_holding_slot(void *arg)
{
    (void)arg;
    if (xInit("ctl", NONDURABLE) != 0)
        _exit(3);
    _exit(0); /* no xShutdown: the slot stays taken */
}

int main(void)
{
    struct xctl_hdr h;
    int p2c[2], c2p[2], st;
    pid_t pid;
    char c;

    tu_tmpdir();
    E(xInit("ctl", NONDURABLE));
    test_cond("the control file starts with magic and format",
              tu_read("ctl/xac.ctl", &h, sizeof h, 0) == (ssize_t)sizeof h &&
                  h.ch_magic == XCTL_MAGIC && h.ch_format == XCTL_FORMAT &&
                  h.ch_psize == PAGESIZE && h.ch_nslots >= XCTL_SLOTS_MIN);
    E(xShutdown());

    st = tu_in_child(die_holding_slot, NULL);
    test_cond("a child took a slot and died", WIFEXITED(st) &&
                                                  WEXITSTATUS(st) == 0);
    test_cond("the dead process's slot is reclaimed",
              xInit("ctl", NONDURABLE) == 0);
    E(xShutdown());

    /* A live process in the directory: both may use it. */
    if (pipe(p2c) != 0 || pipe(c2p) != 0)
        abort();
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        c = xInit("ctl", NONDURABLE) == 0 ? 'y' : 'n';
        if (write(c2p[1], &c, 1) != 1 || read(p2c[0], &c, 1) != 1)
            _exit(4);
        xShutdown();
        _exit(0);
    }
    test_cond("a live child took a slot", read(c2p[0], &c, 1) == 1 &&
                                              c == 'y');
    test_cond("a second live process may xInit the same directory",
              xInit("ctl", NONDURABLE) == 0);
    E(xShutdown());
    if (write(p2c[1], "x", 1) != 1)
        abort();
    waitpid(pid, &st, 0);
    test_cond("after the child shuts down, xInit succeeds",
              xInit("ctl", NONDURABLE) == 0);
    E(xShutdown());
    return test_report();
}
