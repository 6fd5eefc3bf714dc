/* tutil.c: helpers the unit tests share (see tutil.h). */
#include "tutil.h"

#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xac_os.h"

static char tu_dir[4096];
static pid_t tu_owner;

static int rm_one(const char *path, const struct stat *st, int flag,
                  struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void tu_cleanup(void)
{
    if (tu_dir[0] != '\0' && getpid() == tu_owner) {
        if (chdir("/") != 0)
            return;
        nftw(tu_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    }
}

const char *tu_tmpdir(void)
{
    const char *t = getenv("TMPDIR");

    snprintf(tu_dir, sizeof tu_dir, "%s/xactest-XXXXXX",
             t != NULL && t[0] != '\0' ? t : "/tmp");
    if (mkdtemp(tu_dir) == NULL || chdir(tu_dir) != 0) {
        perror("tu_tmpdir");
        exit(2);
    }
    tu_owner = getpid();
    atexit(tu_cleanup);
    return tu_dir;
}

ssize_t tu_read(const char *path, void *buf, size_t len, off_t off)
{
    int fd = open(path, O_RDONLY);
    ssize_t n;

    if (fd < 0)
        return -1;
    n = pread(fd, buf, len, off);
    close(fd);
    return n;
}

int tu_int_at(const char *path, off_t off)
{
    int v = -1;

    if (tu_read(path, &v, sizeof v, off) != (ssize_t)sizeof v)
        return -1;
    return v;
}

off_t tu_size(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 ? st.st_size : -1;
}

int tu_in_child(void (*fn)(void *), void *arg)
{
    pid_t pid;
    int st = 0;

    fflush(NULL);
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        fn(arg);
        _exit(0);
    }
    while (waitpid(pid, &st, 0) < 0)
        ;
    return st;
}

int tu_crashed(int st)
{
    return (WIFSIGNALED(st) &&
            (WTERMSIG(st) == SIGSEGV || WTERMSIG(st) == SIGBUS)) ||
           (WIFEXITED(st) && WEXITSTATUS(st) != 0);
}

long tu_max_map_count(void)
{
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    long n = -1;

    if (f != NULL) {
        if (fscanf(f, "%ld", &n) != 1)
            n = -1;
        fclose(f);
    }
    return n;
}

long tu_maps_now(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    long n = 0;
    int c;

    if (f == NULL)
        return -1;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

int tu_valgrind(void)
{
    const char *p = getenv("LD_PRELOAD");

    return p != NULL && strstr(p, "vgpreload") != NULL;
}

struct xac_stats tu_stats(void)
{
    struct xac_stats st;

    if (xStats(&st) != 0)
        abort();
    return st;
}

void tu_tell(int fd, char c)
{
    if (write(fd, &c, 1) != 1)
        abort();
}

int tu_commit_add(int *x, size_t idx, int v)
{
    int rc;

    do {
        if ((rc = xbegin()) != 0)
            return rc;
        setPageAccess(&x[idx], READ_WRITE);
        x[idx] += v;
        rc = xend();
    } while (rc == ABORTED);
    return rc;
}

char tu_hear(int fd)
{
    struct pollfd p = {fd, POLLIN, 0};
    char c;

    if (poll(&p, 1, 60000) != 1 || read(fd, &c, 1) != 1)
        return '?';
    return c;
}

pid_t tu_spawn_writer(int hear, int tell, const char *file, int npages,
                      int n, int v, int declare)
{
    pid_t pid;

    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        int *y, ok;
        xos_reset();
        if (tu_hear(hear) != 'g')
            _exit(30);
        if (xInit("ctl", NONDURABLE) != 0)
            _exit(20);
        y = xMmap(file, (size_t)npages * PAGESIZE);
        if (y == MAP_FAILED)
            _exit(21);
        xbegin();
        *tu_page(y, n, READ_WRITE, declare) = v;
        ok = xend() == COMMITTED;
        xMunmap(file);
        xShutdown();
        tu_tell(tell, ok ? 'd' : 'n');
        _exit(0);
    }
    return pid;
}

int *tu_store_with_pipes(const char *file, int npages, int down[2],
                         int up[2])
{
    int *x;

    tu_tmpdir();
    if (pipe(down) != 0 || pipe(up) != 0 || xInit("ctl", NONDURABLE) != 0)
        abort();
    x = xMmap(file, (size_t)npages * PAGESIZE);
    if (x == MAP_FAILED)
        abort();
    return x;
}

pid_t tu_spawn_reader(int hear, int tell, const char *file, int npages)
{
    pid_t pid;

    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        int *y;
        char c;
        xos_reset();
        if (xInit("ctl", NONDURABLE) != 0)
            _exit(3);
        y = xMmap(file, (size_t)npages * PAGESIZE);
        if (y == MAP_FAILED)
            _exit(4);
        do {
            if (xbeginQuery() != 0)
                _exit(5);
            (void)*(volatile int *)y;
            tu_tell(tell, 'r');
            c = tu_hear(hear);
            if (xendQuery() != COMMITTED)
                _exit(6);
        } while (c == 'n');
        _exit(xMunmap(file) == 0 && xShutdown() == 0 ? 0 : 2);
    }
    return pid;
}

int tu_reap(pid_t pid)
{
    int st;

    if (waitpid(pid, &st, 0) < 0)
        return 0;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}
