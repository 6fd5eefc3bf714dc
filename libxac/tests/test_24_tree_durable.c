/* test_24_tree_durable: a durable tree survives SIGKILL.
 *
 * For each tree (B+-tree, CO B-tree): a store opened with durability
 * TS_DURABLE (xInit(dir, DURABLE)).  Several rounds: a child reopens the
 * tree (recovery runs at xInit/xMmap after the previous child's crash),
 * inserts keys one durable transaction each and, only after tr_insert()
 * returned (its xend() said COMMITTED), writes the key's index to a pipe.
 * The parent waits for the first report, sleeps a random 5..150 ms and
 * SIGKILLs the child, which may be anywhere: inside a transaction, in the
 * commit, in the group-commit sync, in recovery.  The next round continues
 * after the last reported key (an unreported but committed insert is
 * simply inserted again, with the same value).
 *
 * Afterwards the parent reopens the tree durably (recovery), runs the
 * invariant checker, and checks that every reported key is there with its
 * value, and that the tree holds no more keys than reported plus one per
 * round (the one insert that may have committed without being reported).
 * XAC_TEST24_SEED fixes the random kill times (printed on a "#" line). */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "tree.h"
#include "workload.h"

#define ROUNDS 10
#define KMAX 20000 /* keys available; a fast disk stops the child here */
#define VBYTES 512

static uint64_t keys[KMAX];

static int open_durable(struct ts_store *s, const char *name, size_t len,
                        int advisory)
{
    struct ts_config tc = {TS_XAC, TS_DURABLE, advisory};
    return ts_open_config(s, &tc, ".", name, len);
}

/* The child: insert keys[from..KMAX), report each committed index. */
static int child(enum tr_kind kind, const char *name, size_t len, long from,
                 int fd)
{
    struct ts_store s;
    tr_tree *t;
    unsigned char v[VBYTES];
    if (open_durable(&s, name, len, kind == TR_BTREE) != 0 ||
        tr_open(&s, &t) != 0)
        return 1;
    for (long i = from; i < KMAX; i++) {
        xb_workload_value(keys[i], v, sizeof v);
        if (tr_insert(t, keys[i], v) < 0)
            return 1;
        /* COMMITTED: the record is on stable storage. */
        if (write(fd, &i, sizeof i) != (ssize_t)sizeof i)
            return 1;
    }
    for (;;)
        pause(); /* out of keys: wait for the kill */
}

static void run(enum tr_kind kind, unsigned *seed)
{
    struct tr_config cfg = {kind, 4096, VBYTES};
    const char *name = kind == TR_BTREE ? "dur-bt.db" : "dur-co.db";
    size_t len = tr_file_bytes(&cfg, KMAX);
    struct ts_store s;
    tr_tree *t;
    char desc[256], why[256] = "";
    E(open_durable(&s, name, len, 0));
    E(tr_create(&s, &cfg));
    E(ts_close(&s));

    long next = 0; /* first index not reported yet */
    int rounds = 0, killed = 0, child_failed = 0;
    for (int r = 0; r < ROUNDS && next < KMAX; r++) {
        int pfd[2];
        if (pipe(pfd) != 0) {
            perror("pipe");
            abort();
        }
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            abort();
        }
        if (pid == 0) {
            close(pfd[0]);
            _exit(child(kind, name, len, next, pfd[1]));
        }
        close(pfd[1]);
        long idx;
        ssize_t n = read(pfd[0], &idx, sizeof idx); /* the first commit */
        if (n == (ssize_t)sizeof idx) {
            next = idx + 1;
            unsigned ms = 5 + (unsigned)(rand_r(seed) % 146);
            struct timespec ts = {0, (long)ms * 1000000L};
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
                ;
        }
        kill(pid, SIGKILL);
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
            killed++;
        else
            child_failed++;
        while ((n = read(pfd[0], &idx, sizeof idx)) == (ssize_t)sizeof idx)
            next = idx + 1;
        close(pfd[0]);
        rounds++;
    }
    snprintf(desc, sizeof desc, "%s: %d children killed by SIGKILL while "
             "inserting durably (%d failed on their own)",
             tr_kind_name(kind), killed, child_failed);
    test_cond(desc, killed == rounds && child_failed == 0 && next > 0);

    /* Reopen: recovery replays the log of the last, killed child. */
    E(open_durable(&s, name, len, 0));
    E(tr_open(&s, &t));
    int chk = tr_check(t, why, sizeof why);
    if (chk != 0)
        printf("# %s\n", why);
    snprintf(desc, sizeof desc, "%s: invariants hold after recovery",
             tr_kind_name(kind));
    test_cond(desc, chk == 0);
    long lost = 0, wrong = 0;
    unsigned char v[VBYTES], got[VBYTES];
    for (long i = 0; i < next; i++) {
        xb_workload_value(keys[i], v, sizeof v);
        int f = tr_search(t, keys[i], got);
        if (f != 1)
            lost++;
        else if (memcmp(v, got, VBYTES) != 0)
            wrong++;
    }
    long long held = tr_range(t, 0, UINT64_MAX, NULL, NULL);
    printf("# %s: rounds %d, keys verified %ld, lost %ld, wrong value %ld, "
           "tree holds %lld\n", tr_kind_name(kind), rounds, next - lost -
           wrong, lost, wrong, held);
    snprintf(desc, sizeof desc, "%s: every reported key survived with its "
             "value (lost = 0)", tr_kind_name(kind));
    test_cond(desc, lost == 0 && wrong == 0);
    snprintf(desc, sizeof desc, "%s: at most one unreported insert per "
             "round survived", tr_kind_name(kind));
    test_cond(desc, held >= next && held <= next + rounds);
    tr_close(t);
    E(ts_close(&s));
}

int main(void)
{
    const char *e = getenv("XAC_TEST24_SEED");
    unsigned seed = e != NULL ? (unsigned)strtoul(e, NULL, 10)
                              : (unsigned)time(NULL) ^ (unsigned)getpid();
    printf("# XAC_TEST24_SEED=%u\n", seed);
    tu_tmpdir();
    /* Distinct keys in scattered order (multiplying by an odd constant is
     * a bijection), so "held" counts exactly the inserted ones. */
    for (int i = 0; i < KMAX; i++)
        keys[i] = (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull;
    run(TR_BTREE, &seed);
    run(TR_COBTREE, &seed);
    return test_report();
}
