/* scratch.c: see scratch.h. */
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char scratch_dir[4096];
static pid_t scratch_owner;

static int remove_entry(const char *path, const struct stat *st, int type,
                        struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    remove(path);
    return 0;
}

static void scratch_cleanup(void)
{
    if (scratch_dir[0] != '\0' && getpid() == scratch_owner)
        nftw(scratch_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int xb_settle(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

    if (fd < 0)
        return errno;
    if (syncfs(fd) != 0)
        rc = errno;
    close(fd);
    return rc;
}

void xb_remove_tree(const char *path)
{
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *xb_scratch_create(const char *parent, const char *prog)
{
    struct stat st;
    if (parent == NULL)
        parent = getenv("TMPDIR");
    if (parent == NULL || *parent == '\0')
        parent = "/tmp";
    if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode) ||
        access(parent, W_OK | X_OK) != 0) {
        fprintf(stderr, "%s: --dir %s is not a writable directory.\n", prog,
                parent);
        exit(2);
    }
    int n = snprintf(scratch_dir, sizeof scratch_dir, "%s/xaclab-%s-XXXXXX",
                     parent, prog);
    if (n < 0 || (size_t)n >= sizeof scratch_dir) {
        fprintf(stderr, "%s: --dir %s is too long.\n", prog, parent);
        exit(2);
    }
    if (mkdtemp(scratch_dir) == NULL)
        xb_die_errno("cannot create a directory under --dir");
    scratch_owner = getpid();
    atexit(scratch_cleanup);
    return scratch_dir;
}

char *xb_path(char *buf, size_t len, const char *dir, const char *name)
{
    int n = snprintf(buf, len, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= len) {
        fprintf(stderr, "path too long: %s/%s\n", dir, name);
        abort();
    }
    return buf;
}

void xb_progress(double fraction, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "xaclab-progress %.3f ", fraction);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void xb_die_errno(const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what,
            strerror(errno));
    exit(1);
}
