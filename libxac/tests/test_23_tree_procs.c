/* test_23_tree_procs: P processes insert into and search one transactional
 * tree at the same time, then the parent checks every key and the
 * invariants.
 *
 * Until LIBXAC supports several live processes (issue B), xInit() in a
 * second process returns XAC_EBUSY.  A child that gets it exits with
 * CHILD_BUSY having done nothing, and the parent then runs those children
 * again one after another: the test still checks that separate processes
 * build one consistent tree, and says on a "#" line which way it ran. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "tree.h"
#include "workload.h"

#define PROCS 3
#define KEYS 900
#define VBYTES 512
#define CHILD_BUSY 75

static uint64_t keys[KEYS];

static int child(enum tr_kind kind, const char *name, size_t len, int p)
{
    struct ts_store s;
    tr_tree *t;
    unsigned char v[VBYTES], got[VBYTES];
    size_t begin, end;
    int rc = ts_open(&s, TS_XAC, ".", name, len, kind == TR_BTREE);
    if (rc == XAC_EBUSY)
        return CHILD_BUSY;
    if (rc != 0 || tr_open(&s, &t) != 0)
        return 1;
    xb_workload_slice(KEYS, p, PROCS, &begin, &end);
    int bad = 0;
    for (size_t i = begin; i < end; i++) {
        xb_workload_value(keys[i], v, sizeof v);
        if (tr_insert(t, keys[i], v) < 0)
            bad = 1;
        /* A search of our own key, and of someone else's: if that one is
         * there already, it must have its value. */
        if (tr_search(t, keys[i], got) != 1 || memcmp(v, got, VBYTES) != 0)
            bad = 1;
        uint64_t other = keys[(i * 7 + 3) % KEYS];
        if (tr_search(t, other, got) == 1) {
            xb_workload_value(other, v, sizeof v);
            if (memcmp(v, got, VBYTES) != 0)
                bad = 1;
        }
    }
    tr_close(t);
    if (ts_close(&s) != 0)
        bad = 1;
    return bad;
}

static pid_t spawn(enum tr_kind kind, const char *name, size_t len, int p)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        _exit(child(kind, name, len, p));
    return pid;
}

static int status_of(pid_t pid)
{
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

static void run(enum tr_kind kind)
{
    struct tr_config cfg = {kind, 4096, VBYTES};
    const char *name = kind == TR_BTREE ? "procs-bt.db" : "procs-co.db";
    size_t len = tr_file_bytes(&cfg, KEYS);
    struct ts_store s;
    tr_tree *t;
    char desc[200], why[256] = "";
    E(ts_open(&s, TS_XAC, ".", name, len, 0));
    E(tr_create(&s, &cfg));
    E(ts_close(&s));

    pid_t pids[PROCS];
    int st[PROCS], busy = 0, failed = 0;
    for (int p = 0; p < PROCS; p++)
        pids[p] = spawn(kind, name, len, p);
    for (int p = 0; p < PROCS; p++) {
        st[p] = status_of(pids[p]);
        busy += st[p] == CHILD_BUSY;
    }
    for (int p = 0; p < PROCS; p++) {
        if (st[p] == CHILD_BUSY)
            st[p] = status_of(spawn(kind, name, len, p));
        failed += st[p] != 0;
    }
    printf("# %s: %s\n", tr_kind_name(kind),
           busy ? "LIBXAC refused a second live process (XAC_EBUSY): the "
                  "refused children ran again one after another"
                : "all processes ran concurrently");
    snprintf(desc, sizeof desc, "%s: %d processes inserted and searched",
             tr_kind_name(kind), PROCS);
    test_cond(desc, failed == 0);

    E(ts_open(&s, TS_XAC, ".", name, len, 0));
    E(tr_open(&s, &t));
    int ok = 1;
    unsigned char v[VBYTES], got[VBYTES];
    for (int i = 0; i < KEYS; i++) {
        xb_workload_value(keys[i], v, sizeof v);
        if (tr_search(t, keys[i], got) != 1 || memcmp(v, got, VBYTES) != 0)
            ok = 0;
    }
    snprintf(desc, sizeof desc, "%s: every key of every process is there",
             tr_kind_name(kind));
    test_cond(desc, ok && tr_range(t, 0, UINT64_MAX, NULL, NULL) == KEYS);
    int chk = tr_check(t, why, sizeof why);
    if (chk != 0)
        printf("# %s\n", why);
    snprintf(desc, sizeof desc, "%s: invariants hold afterwards",
             tr_kind_name(kind));
    test_cond(desc, chk == 0);
    tr_close(t);
    E(ts_close(&s));
}

int main(void)
{
    tu_tmpdir();
    xb_workload_keys(keys, KEYS, XB_WORKLOAD_SEED, XB_ORDER_RANDOM);
    run(TR_BTREE);
    run(TR_COBTREE);
    return test_report();
}
