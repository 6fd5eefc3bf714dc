/* test_34_alone: a durable commit by the only process attached goes
 * straight into the data file; with another process attached it goes
 * through the version pool and the group-commit wait.
 *
 * Alone, the commit appends its record, syncs the log under ch_lock and
 * then writes its pages into the data file (xac_commit.c,
 * commit_durable_alone).  The WAL rule must still hold: a page reaches
 * the data file only after its record is stable, so a failed sync leaves
 * the data file as it was.
 *
 * The record itself goes to the log in one O_DIRECT | O_DSYNC write of
 * its 512-byte blocks (xac_log.c, xlog_append_stable) when the file
 * system takes O_DIRECT; XAC_LOG_DIRECT=0 brings back write + fdatasync.
 * A failure of either kind fails the commit before the data file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_os.h"

#define NPG 4

static int p2c[2], c2p[2];

static int fail_sync(int fd)
{
    (void)fd;
    errno = EIO;
    return -1;
}

/* Descriptors LIBXAC opened O_DIRECT, and the writes made through them. */
static int direct_fd[64];
static unsigned direct_writes, misaligned_writes;

static int spy_open(const char *path, int flags, mode_t mode)
{
    int fd = open(path, flags, mode);
    if (fd >= 0 && fd < 64)
        direct_fd[fd] = (flags & O_DIRECT) != 0 && (flags & O_DSYNC) != 0;
    return fd;
}

static ssize_t spy_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (fd >= 0 && fd < 64 && direct_fd[fd]) {
        direct_writes++;
        misaligned_writes += (n % 512) != 0 || (off % 512) != 0;
    }
    return pwrite(fd, buf, n, off);
}

static ssize_t fail_direct_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (fd >= 0 && fd < 64 && direct_fd[fd]) {
        errno = EIO;
        return -1;
    }
    return pwrite(fd, buf, n, off);
}

/* Does the file system of the current directory take O_DIRECT writes?
 * (ext4 and xfs do; tmpfs before Linux 6.6 does not.)  LIBXAC must then
 * use it; else fall back to write + fdatasync. */
static int fs_takes_direct(void)
{
    void *buf;
    int fd = open("probe", O_WRONLY | O_CREAT | O_DIRECT, 0600), ok;

    if (fd < 0)
        return 0;
    if (posix_memalign(&buf, 4096, 4096) != 0)
        abort();
    memset(buf, 0, 4096);
    ok = pwrite(fd, buf, 4096, 0) == 4096;
    close(fd);
    unlink("probe");
    free(buf);
    return ok;
}

/* In a child: xInit(ctl, DURABLE) and map npg pages of db, or _exit with
 * code (xInit failed) or code + 1 (xMmap failed). */
static int *child_attach(const char *ctl, const char *db, size_t npg,
                         int code)
{
    int *x;

    if (xInit(ctl, DURABLE) != 0)
        _exit(code);
    x = xMmap(db, npg * PAGESIZE);
    if (x == MAP_FAILED)
        _exit(code + 1);
    return x;
}

/* Run fn in a child process: did it exit with status 0? */
static int child_ok(void (*fn)(void *))
{
    int st = tu_in_child(fn, NULL);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* Map the file and stay attached, idle, until the parent says 'q'. */
static void idle_child(void *arg)
{
    int *x = child_attach("ctl", "a.db", NPG, 20);
    (void)arg;

    tu_tell(c2p[1], 'm');
    if (tu_hear(p2c[0]) != 'q')
        _exit(22);
    /* The parent's pool commits are visible to this process. */
    if (xbeginQuery() != 0)
        _exit(23);
    if (*tu_page(x, 0, READ, 1) != 8 || *tu_page(x, 2, READ, 1) != 80)
        _exit(24);
    xendQuery();
    _exit(xShutdown() == 0 ? 0 : 25);
}

/* Add 1 to page 0 and 10 to page 2 in one committed transaction. */
static int add_both(int *x)
{
    int rc;

    if (xbegin() != 0)
        return -1;
    *tu_page(x, 0, READ_WRITE, 1) += 1;
    *tu_page(x, 2, READ_WRITE, 1) += 10;
    rc = xend();
    return rc;
}

static int file_ok(int v0, int v2)
{
    return tu_int_at("a.db", 0) == v0 &&
           tu_int_at("a.db", 2 * PAGESIZE) == v2;
}

/* More pages than XAC_BEFORE_PAGES (64) keep before-images: the first 64
 * written pages diff against the copies taken at their write grants, the
 * rest against versions read back from the file.  Pages are made writable
 * three ways: a write fault on an untouched page, a write after a read,
 * and setPageAccess.  Each page changes in exactly 4 bytes (0 to
 * 0x01010101), so a wrong before-image shows in the logged payload. */
#define BIG 80
#define WORD 0x01010101

static void big_child(void *arg)
{
    int *x = child_attach("ctl2", "b.db", BIG, 30), i, rc;
    (void)arg;

    if (xbegin() != 0)
        _exit(31);
    for (i = 0; i < BIG; i++) {
        int *p = tu_page(x, i, READ_WRITE, i % 3 == 2);
        if (i % 3 == 1 && *(volatile int *)p != 0)
            _exit(32);
        *p = WORD;
        if (i % 5 == 0)
            *p = WORD; /* a second write to the page changes nothing */
    }
    rc = xend();
    /* Crash: no xShutdown, no checkpoint; recovery has only the log. */
    _exit(rc == COMMITTED ? 0 : 33);
}

static int big_commit(void)
{
    struct xac_stats st;
    int *x, i, ok;
    unsigned long long payload;

    E(xInit("ctl2", DURABLE));
    x = xMmap("b.db", BIG * PAGESIZE);
    if (x == MAP_FAILED)
        return 0;
    E(xStats(&st));
    payload = st.log_payload;
    E(xShutdown());
    test_cond("a transaction writing 80 pages commits, then its process "
              "dies",
              child_ok(big_child));
    E(xInit("ctl2", DURABLE));
    x = xMmap("b.db", BIG * PAGESIZE);
    if (x == MAP_FAILED)
        return 0;
    E(xStats(&st));
    test_cond("its record holds exactly the 4 changed bytes of each page",
              st.log_payload - payload == 4 * BIG);
    E(xbeginQuery());
    for (ok = 1, i = 0; i < BIG; i++)
        ok &= *tu_page(x, i, READ, 1) == WORD;
    xendQuery();
    E(xShutdown());
    return ok;
}

/* Twenty alone commits, their small records packed into shared 512-byte
 * blocks, then death without xShutdown. */
static void small_child(void *arg)
{
    int *x = child_attach("ctl3", "c.db", NPG, 40), i;
    (void)arg;

    for (i = 0; i < 20; i++)
        if (add_both(x) != COMMITTED)
            _exit(42);
    _exit(0);
}

/* The alone path never syncs the data file: power loss may take all of
 * its writes.  Recovery must then rebuild it from the log alone, which
 * needs every record intact, including the bytes each direct write
 * carried over from the previous record's last block. */
static int small_commits(void)
{
    int fd, ok, *x;

    test_cond("twenty small alone commits, then the process dies",
              child_ok(small_child));
    fd = open("c.db", O_WRONLY);
    if (fd < 0 || ftruncate(fd, 0) != 0 ||
        ftruncate(fd, NPG * PAGESIZE) != 0 || close(fd) != 0)
        abort(); /* the data file's writes are lost */
    E(xInit("ctl3", DURABLE));
    x = xMmap("c.db", NPG * PAGESIZE);
    if (x == MAP_FAILED)
        return 0;
    E(xbeginQuery());
    ok = *tu_page(x, 0, READ, 1) == 20 && *tu_page(x, 2, READ, 1) == 200;
    xendQuery();
    E(xShutdown());
    return ok;
}

int main(void)
{
    struct xac_stats s0, s1;
    int *x, i, ok, st, direct;
    pid_t pid;

    tu_tmpdir();
    direct = fs_takes_direct();
    xos.open = spy_open;
    xos.pwrite = spy_pwrite;
    E(xInit("ctl", DURABLE));
    x = xMmap("a.db", NPG * PAGESIZE);
    if (x == MAP_FAILED)
        abort();
    E(xStats(&s0));

    /* Alone: each commit is direct, syncs once, and is in the file at
     * once (read(2) at xend, before any checkpoint or xMunmap). */
    ok = 1;
    for (i = 1; i <= 5; i++)
        ok &= add_both(x) == COMMITTED && file_ok(i, 10 * i);
    test_cond("alone: every commit is in the data file when xend returns",
              ok);
    E(xStats(&s1));
    test_cond("alone: all five commits were direct",
              s1.commits - s0.commits == 5 &&
                  s1.direct_commits - s0.direct_commits == 5);
    test_cond("alone: one log record and one sync each",
              s1.log_records - s0.log_records == 5 &&
                  s1.log_syncs - s0.log_syncs == 5);
    test_cond("alone: each record went to the log in one O_DIRECT | "
              "O_DSYNC write of whole 512-byte blocks (where the file "
              "system takes O_DIRECT; else none did)",
              direct ? s1.log_direct_writes - s0.log_direct_writes == 5 &&
                           direct_writes == 5 && misaligned_writes == 0
                     : s1.log_direct_writes == 0 && direct_writes == 0);

    /* Another process attached: the commits go through the pool. */
    if (pipe(p2c) != 0 || pipe(c2p) != 0)
        abort();
    pid = fork();
    if (pid == 0)
        idle_child(NULL);
    test_cond("the second process has the file mapped",
              pid > 0 && tu_hear(c2p[0]) == 'm');
    E(xStats(&s0));
    ok = 1;
    for (i = 6; i <= 8; i++)
        ok &= add_both(x) == COMMITTED;
    E(xStats(&s1));
    test_cond("shared: the commits succeed", ok);
    test_cond("shared: none of them was direct",
              s1.commits - s0.commits == 3 &&
                  s1.direct_commits == s0.direct_commits);
    tu_tell(p2c[1], 'q');
    test_cond("shared: the other process reads every commit",
              waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
                  WEXITSTATUS(st) == 0);

    /* The other process is gone: direct again. */
    E(xStats(&s0));
    test_cond("alone again: the commit succeeds", add_both(x) == COMMITTED);
    E(xStats(&s1));
    test_cond("alone again: it was direct",
              s1.direct_commits - s0.direct_commits == 1);
    test_cond("alone again: its record was one direct write",
              s1.log_direct_writes - s0.log_direct_writes ==
                  (unsigned long long)direct);
    test_cond("alone again: the file holds every commit", file_ok(9, 90));

    /* The WAL rule: a failed log write-and-sync fails the commit, and the
     * page never reaches the data file. */
    xos.pwrite = fail_direct_pwrite;
    xos.fdatasync = fail_sync;
    test_cond("a failed direct log write (or sync) fails the direct commit",
              add_both(x) == XAC_EIO);
    xos_reset();
    test_cond("the data file does not have the failed commit",
              file_ok(9, 90));
    test_cond("the log is failed", xStats(&s1) == 0 && s1.failed);
    test_cond("xShutdown reports the failed state", xShutdown() == XAC_EIO);

    /* Recovery replays the stable records: the direct commits stay, the
     * failed one is either fully there or fully absent. */
    E(xInit("ctl", DURABLE));
    x = xMmap("a.db", NPG * PAGESIZE);
    test_cond("xMmap after recovery", x != MAP_FAILED);
    if (x != MAP_FAILED) {
        E(xbeginQuery());
        i = *tu_page(x, 0, READ, 1);
        ok = (i == 9 && *tu_page(x, 2, READ, 1) == 90) ||
             (i == 10 && *tu_page(x, 2, READ, 1) == 100);
        xendQuery();
        test_cond("recovery keeps every direct commit, all or nothing of "
                  "the failed one",
                  ok);
        test_cond("commits work after recovery", add_both(x) == COMMITTED);
    }
    E(xShutdown());

    /* XAC_LOG_DIRECT=0: write and fdatasync, and a failed fdatasync fails
     * the commit before the data file. */
    if (setenv("XAC_LOG_DIRECT", "2", 1) != 0)
        abort();
    test_cond("XAC_LOG_DIRECT=2 is refused",
              xInit("ctl", DURABLE) == XAC_EINVAL);
    if (setenv("XAC_LOG_DIRECT", "0", 1) != 0)
        abort();
    E(xInit("ctl", DURABLE));
    x = xMmap("a.db", NPG * PAGESIZE);
    if (x == MAP_FAILED)
        abort();
    E(xbeginQuery());
    i = *tu_page(x, 0, READ, 1);
    xendQuery();
    E(xStats(&s0));
    test_cond("XAC_LOG_DIRECT=0: the commit is direct, its record written "
              "and synced",
              add_both(x) == COMMITTED && xStats(&s1) == 0 &&
                  s1.direct_commits - s0.direct_commits == 1 &&
                  s1.log_direct_writes == s0.log_direct_writes &&
                  s1.log_syncs - s0.log_syncs == 1 &&
                  tu_int_at("a.db", 0) == i + 1);
    xos.fdatasync = fail_sync;
    test_cond("XAC_LOG_DIRECT=0: a failed sync fails the commit",
              add_both(x) == XAC_EIO);
    xos_reset();
    test_cond("XAC_LOG_DIRECT=0: the data file does not have it",
              tu_int_at("a.db", 0) == i + 1);
    test_cond("XAC_LOG_DIRECT=0: xShutdown reports the failed state",
              xShutdown() == XAC_EIO);
    if (unsetenv("XAC_LOG_DIRECT") != 0)
        abort();

    i = big_commit();
    test_cond("recovery restores all 80 pages", i);
    i = small_commits();
    test_cond("with the data file's writes lost, recovery rebuilds all "
              "twenty commits from the log",
              i);
    return test_report();
}
