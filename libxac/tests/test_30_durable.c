/* test_30_durable: DURABLE basics.  Commits reach the log with a CRC32C,
 * survive a process that dies without xShutdown, the log is diffed (bytes
 * grow with the bytes changed, not the pages), checkpoints let log files
 * be archived, the sync method is selectable, and a failed sync fails the
 * transaction and every later one until recovery (fsyncgate).  Run with
 * XAC_LOG_DIRECT=0 (see main). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_crc.h"
#include "xac_os.h"

#define NP 16

static void child_commits(void *arg)
{
    int *x;
    (void)arg;
    if (xInit("ctl", DURABLE) != 0)
        _exit(3);
    x = xMmap("d.db", NP * PAGESIZE);
    if (x == MAP_FAILED)
        _exit(4);
    for (int i = 0; i < 100; i++)
        if (tu_commit_add(x, (size_t)(i % NP) * tu_ipp(), 1) != COMMITTED)
            _exit(5);
    _exit(0); /* no xShutdown: the data file may lack the commits */
}

static int fail_sync(int fd)
{
    (void)fd;
    errno = EIO;
    return -1;
}

static int sync_pipe = -1;
static int slow_sync(int fd)
{
    (void)fd;
    if (write(sync_pipe, "s", 1) != 1)
        _exit(6);
    sleep(30); /* killed here, as the group-commit leader */
    return 0;
}

static void child_leader(void *arg)
{
    int *x;
    (void)arg;
    if (xInit("ctl", DURABLE) != 0)
        _exit(3);
    x = xMmap("d.db", NP * PAGESIZE);
    if (x == MAP_FAILED)
        _exit(4);
    xos.fdatasync = slow_sync;
    tu_commit_add(x, 9 * tu_ipp(), 1);
    _exit(5);
}

static int nsync;
static int count_sync(int fd)
{
    nsync++;
    return fdatasync(fd);
}

/* Log files in the control directory, and the size of the newest. */
static int nlogs(off_t *newest)
{
    DIR *d = opendir("ctl");
    struct dirent *de;
    struct stat st;
    char path[512], best[256] = "";
    int n = 0;

    if (d == NULL)
        return -1;
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "xac.log.", 8) != 0)
            continue;
        n++;
        if (strcmp(de->d_name, best) > 0)
            snprintf(best, sizeof best, "%s", de->d_name);
    }
    closedir(d);
    snprintf(path, sizeof path, "ctl/%s", best);
    *newest = stat(path, &st) == 0 ? st.st_size : -1;
    return n;
}

int main(void)
{
    struct xac_stats st, st2;
    unsigned long long b0, b1, b2;
    char **names;
    int *x, ok, i, rc, w, logs_before;
    off_t newest;

    tu_tmpdir();
    /* This test counts and fails the sync calls of a lone process: its
     * commits must write and sync the log, not use the single O_DIRECT |
     * O_DSYNC write (test_34_alone covers that path and its failures). */
    if (setenv("XAC_LOG_DIRECT", "0", 1) != 0)
        return 1;
    test_cond("CRC32C of \"123456789\" is 0xE3069283",
              xac_crc32c(0, "123456789", 9) == 0xE3069283u &&
                  xac_crc32c_sw(0, "123456789", 9) == 0xE3069283u);

    setenv("XAC_SYNC", "nonsense", 1);
    test_cond("xInit DURABLE refuses a bad XAC_SYNC",
              xInit("ctl", DURABLE) == XAC_EINVAL);
    unsetenv("XAC_SYNC");
    test_cond("xInit DURABLE", xInit("ctl", DURABLE) == 0);
    x = xMmap("d.db", NP * PAGESIZE);
    test_cond("xMmap", x != MAP_FAILED);
    test_cond("a commit", tu_commit_add(x, 0, 7) == COMMITTED);
    E(xStats(&st));
    test_cond("it wrote one record", st.log_records == 1 && st.log_bytes > 0);
    b0 = st.log_bytes;
    /* One byte on each of 8 pages vs 8 bytes on one page: same pages
     * touched => log grows with bytes changed. */
    E(xbegin());
    for (i = 0; i < 8; i++)
        setPageAccess((char *)x + (size_t)i * PAGESIZE, READ_WRITE);
    for (i = 0; i < 8; i++)
        ((char *)x)[(size_t)i * PAGESIZE + 100] = 1;
    test_cond("8 pages, 1 byte each", xend() == COMMITTED);
    E(xStats(&st));
    b1 = st.log_bytes - b0;
    E(xbegin());
    for (i = 0; i < 8; i++)
        setPageAccess((char *)x + (size_t)i * PAGESIZE, READ_WRITE);
    for (i = 0; i < 8; i++)
        ((char *)x)[(size_t)(i % 8) * PAGESIZE + 200] = 2;
    memset((char *)x + 3 * PAGESIZE + 1000, 9, 2000);
    test_cond("8 pages, 2 KB on one", xend() == COMMITTED);
    E(xStats(&st2));
    b2 = st2.log_bytes - st.log_bytes;
    printf("# log bytes: 1-byte changes on 8 pages %llu, +2000 bytes %llu\n",
           b1, b2);
    test_cond("diff logging: 8 one-byte changes take < 200 log bytes",
              b1 < 200);
    test_cond("diff logging: 2000 more bytes cost about 2000 bytes",
              b2 > b1 + 1900 && b2 < b1 + 2300);

    /* Selectable sync method, counted through the OS table. */
    xos.fdatasync = count_sync;
    nsync = 0;
    test_cond("commit with fdatasync", tu_commit_add(x, 1, 1) == COMMITTED);
    test_cond("one fdatasync per lone commit", nsync == 1);
    xos_reset();
    test_cond("xSetSyncMethod(fsync)", xSetSyncMethod(XAC_SYNC_FSYNC) == 0);
    xos.fsync = count_sync;
    nsync = 0;
    test_cond("commit with fsync", tu_commit_add(x, 1, 1) == COMMITTED &&
                                       nsync == 1);
    xos_reset();
    test_cond("xSetSyncMethod(dsync)", xSetSyncMethod(XAC_SYNC_DSYNC) == 0);
    test_cond("commit with O_DSYNC", tu_commit_add(x, 1, 1) == COMMITTED);
    test_cond("xSetSyncMethod rejects junk", xSetSyncMethod(7) == XAC_EINVAL);
    E(xSetSyncMethod(XAC_SYNC_FDATASYNC));

    test_cond("xCheckpoint", xCheckpoint() == 0);
    test_cond("xShutdown", xShutdown() == 0);
    test_cond("the data file holds the commits after xShutdown",
              tu_int_at("d.db", 0) == 7 && tu_int_at("d.db", 4) == 3);

    /* A child commits 100 times and exits without xShutdown. */
    logs_before = nlogs(&newest);
    test_cond("log files are preallocated in 4 MiB steps",
              newest > 0 && newest % (4 << 20) == 0);
    w = tu_in_child(child_commits, NULL);
    test_cond("child committed and exited", WIFEXITED(w) &&
                                                WEXITSTATUS(w) == 0);
    test_cond("xInit DURABLE recovers", xInit("ctl", DURABLE) == 0);
    x = xMmap("d.db", NP * PAGESIZE);
    test_cond("xMmap after the crash", x != MAP_FAILED);
    ok = 1;
    E(xbeginQuery());
    for (i = 0; i < NP; i++)
        setPageAccess(&x[(size_t)i * (PAGESIZE / sizeof(int))], READ);
    for (i = 0; i < NP; i++) {
        int want = (i == 0 ? 7 : 0) + 100 / NP + (i < 100 % NP ? 1 : 0);
        if (x[(size_t)i * (PAGESIZE / sizeof(int))] != want)
            ok = 0;
    }
    xendQuery();
    test_cond("every commit of the dead child is there", ok);
    E(xStats(&st));
    test_cond("recovery ran", st.recoveries >= 1);
    test_cond("recovery read the preallocated zeros as the end of the log "
              "and went on in the same file",
              nlogs(&newest) == logs_before);

    /* Rotation and archive. */
    test_cond("xArchive lists", xArchive(&names, 0) == 0 && names != NULL);
    free(names);
    test_cond("xArchive rejects junk flags", xArchive(NULL, 8) == XAC_EINVAL);

    /* fsyncgate: a failed sync fails the transaction and all later
     * ones, even if the next sync would succeed. */
    xos.fdatasync = fail_sync;
    E(xbegin());
    setPageAccess(&x[5], READ_WRITE);
    x[5] = 55;
    rc = xend();
    test_cond("xend after a failed sync returns XAC_EIO", rc == XAC_EIO);
    xos_reset();
    test_cond("the log is failed", xStats(&st) == 0 && st.failed);
    test_cond("xbegin in the failed state returns XAC_EIO",
              xbegin() == XAC_EIO);
    test_cond("xCheckpoint in the failed state returns XAC_EIO",
              xCheckpoint() == XAC_EIO);
    test_cond("xShutdown in the failed state reports it",
              xShutdown() == XAC_EIO);
    test_cond("xInit recovers from the failed state",
              xInit("ctl", DURABLE) == 0);
    x = xMmap("d.db", NP * PAGESIZE);
    test_cond("xMmap", x != MAP_FAILED);
    test_cond("commits work again", tu_commit_add(x, 2, 1) == COMMITTED);
    E(xStats(&st));
    test_cond("not failed any more", !st.failed);

    /* The group-commit leader dies inside its sync: the others take over
     * after a timeout. */
    {
        int pfd[2], w2;
        pid_t pid;
        char c;
        if (pipe(pfd) != 0)
            abort();
        sync_pipe = pfd[1];
        pid = fork();
        if (pid == 0)
            child_leader(NULL);
        test_cond("the leader is syncing", read(pfd[0], &c, 1) == 1);
        kill(pid, SIGKILL);
        waitpid(pid, &w2, 0);
        close(pfd[0]);
        close(pfd[1]);
        test_cond("a commit after the leader died",
                  tu_commit_add(x, 3, 1) == COMMITTED);
        E(xbeginQuery());
        setPageAccess(&x[3], READ);
        ok = x[3] == 1;
        test_cond("and its effect is visible", xendQuery() == COMMITTED && ok);
    }
    test_cond("xShutdown", xShutdown() == 0);

    /* Log rotation at a small limit, then archive with removal. */
    setenv("XAC_LOG_LIMIT", "4096", 1);
    E(xInit("ctl", DURABLE));
    x = xMmap("d.db", NP * PAGESIZE);
    for (i = 0; i < 400; i++)
        if (tu_commit_add(x, (size_t)(i % NP) * tu_ipp() + 7, i) !=
            COMMITTED)
            break;
    test_cond("400 commits across rotations", i == 400);
    test_cond("xCheckpoint", xCheckpoint() == 0);
    names = NULL;
    rc = xArchive(&names, XAC_ARCHIVE_REMOVE);
    for (i = 0; names != NULL && names[i] != NULL; i++)
        ;
    printf("# %d log files archived\n", i);
    test_cond("xArchive removes old log files", rc == 0 && i >= 3);
    free(names);
    E(xShutdown());
    unsetenv("XAC_LOG_LIMIT");
    E(xInit("ctl", DURABLE));
    x = xMmap("d.db", NP * PAGESIZE);
    ok = 1;
    E(xbeginQuery());
    for (i = 0; i < NP; i++)
        setPageAccess(&x[(size_t)i * (PAGESIZE / sizeof(int))], READ);
    for (i = 0; i < NP; i++) {
        int want = 0;
        for (int k = i; k < 400; k += NP)
            want += k;
        if (x[(size_t)i * (PAGESIZE / sizeof(int)) + 7] != want)
            ok = 0;
    }
    xendQuery();
    test_cond("data intact after rotation, archive and recovery", ok);
    E(xShutdown());
    return test_report();
}
