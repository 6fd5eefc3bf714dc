/* tstore.c: see tstore.h. */
#include "tstore.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define TS_PAGE 4096u

int ts_open(struct ts_store *s, enum ts_kind kind, const char *dir,
            const char *name, size_t len, int advisory)
{
    struct ts_config cfg = {kind, TS_NONDURABLE, advisory};
    return ts_open_config(s, &cfg, dir, name, len);
}

int ts_stats(struct ts_store *s, struct xac_stats *st)
{
    memset(st, 0, sizeof *st);
    if (s->ts_kind != TS_XAC)
        return 0;
    return xStats(st);
}

int ts_open_config(struct ts_store *s, const struct ts_config *cfg,
                   const char *dir, const char *name, size_t len)
{
    int rc;
    enum ts_kind kind = cfg->kind;

    s->ts_kind = kind;
    s->ts_durability =
        kind == TS_XAC && cfg->durability == TS_DURABLE ? TS_DURABLE
                                                        : TS_NONDURABLE;
    s->ts_advisory = cfg->advisory && kind == TS_XAC;
    s->ts_len = len;
    s->ts_fd = -1;
    s->ts_aborts = 0;
    if (len == 0 || len % TS_PAGE != 0 ||
        snprintf(s->ts_path, sizeof s->ts_path, "%s/%s", dir, name) >=
            (int)sizeof s->ts_path)
        return EINVAL;
    if (kind == TS_XAC) {
        if ((rc = xInit(dir, s->ts_durability == TS_DURABLE ? DURABLE : NONDURABLE)) != 0)
            return rc;
        s->ts_base = xMmap(s->ts_path, len);
        if (s->ts_base == MAP_FAILED) {
            rc = errno;
            xShutdown();
            return rc;
        }
        return 0;
    }
    s->ts_fd = open(s->ts_path, O_RDWR | O_CREAT, 0600);
    if (s->ts_fd < 0)
        return errno;
    off_t size = lseek(s->ts_fd, 0, SEEK_END);
    if (size < 0 || ((size_t)size < len && ftruncate(s->ts_fd, (off_t)len)))
        goto fail;
    s->ts_base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
                      s->ts_fd, 0);
    if (s->ts_base == MAP_FAILED)
        goto fail;
    return 0;
fail:
    rc = errno;
    close(s->ts_fd);
    s->ts_fd = -1;
    return rc;
}

int ts_close(struct ts_store *s)
{
    int rc = 0, rc2;

    if (s->ts_kind == TS_XAC) {
        rc = xMunmap(s->ts_path);
        rc2 = xShutdown();
        return rc ? rc : rc2;
    }
    if (munmap(s->ts_base, s->ts_len) != 0)
        rc = errno;
    if (close(s->ts_fd) != 0 && rc == 0)
        rc = errno;
    s->ts_fd = -1;
    return rc;
}

static void ts_check(int rc, const char *what)
{
    if (rc != 0) {
        fprintf(stderr, "tstore: %s: %s\n", what, xStrerror(rc));
        abort();
    }
}

void ts_begin(struct ts_store *s)
{
    if (s->ts_kind == TS_XAC)
        ts_check(xbegin(), "xbegin");
}

void ts_begin_query(struct ts_store *s)
{
    if (s->ts_kind == TS_XAC)
        ts_check(xbeginQuery(), "xbeginQuery");
}

int ts_end(struct ts_store *s)
{
    int st = s->ts_kind == TS_XAC ? xend() : COMMITTED;
    s->ts_aborts += st == ABORTED;
    return st;
}

int ts_end_query(struct ts_store *s)
{
    int st = s->ts_kind == TS_XAC ? xendQuery() : COMMITTED;
    s->ts_aborts += st == ABORTED;
    return st;
}

void ts_touch_pages(struct ts_store *s, const void *p, size_t len, int mode)
{
    (void)s;
    if (len == 0)
        return;
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(TS_PAGE - 1);
    uintptr_t end = (uintptr_t)p + len;
    for (; a < end; a += TS_PAGE)
        setPageAccess((void *)a, mode);
}
