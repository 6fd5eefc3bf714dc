/* procs.c: see procs.h. */
#include "procs.h"

#include "clock.h"
#include "scratch.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* Step 1: fork; *ready_fd and *go_fd get the parent's ends. */
static void start(struct xb_procs *g, xb_proc_body body, void *arg,
                  int *ready_fd, int *go_fd)
{
    int ready[2], go[2];

    if (pipe(ready) != 0 || pipe(go) != 0)
        xb_die_errno("pipe");
    fflush(NULL);
    for (int k = 0; k < g->n; k++) {
        g->pid[k] = fork();
        if (g->pid[k] < 0)
            xb_die_errno("fork");
        if (g->pid[k] == 0) {
            struct xb_proc self = {ready[1], go[0]};
            close(ready[0]);
            close(go[1]);
            _exit(body(&self, k, arg));
        }
    }
    close(ready[1]);
    close(go[0]);
    *ready_fd = ready[0];
    *go_fd = go[1];
}

/* Step 2: every child's status byte, or end-of-file. */
static void wait_ready(struct xb_procs *g, int fd)
{
    int got = 0;

    while (got < g->n) {
        ssize_t r = read(fd, g->said + got, (size_t)(g->n - got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break; /* every child spoke or died */
        got += (int)r;
    }
    close(fd);
}

/* Step 3: one byte per child in one write (atomic: fewer than PIPE_BUF)
 * wakes them all together; end-of-file alone tells them to stop. */
static void release(const struct xb_procs *g, int fd, int go)
{
    char words[XB_PROCS_MAX];

    memset(words, 'g', sizeof words);
    if (go && write(fd, words, (size_t)g->n) != (ssize_t)g->n)
        xb_die_errno("cannot start the processes");
    close(fd);
}

static double seconds(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* Step 4. */
static void reap(struct xb_procs *g)
{
    for (int k = 0; k < g->n; k++) {
        int status;
        struct rusage ru;
        while (wait4(g->pid[k], &status, 0, &ru) < 0)
            if (errno != EINTR)
                xb_die_errno("wait4");
        g->failed[k] = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        g->nfailed += g->failed[k];
        g->user_s += seconds(ru.ru_utime);
        g->sys_s += seconds(ru.ru_stime);
    }
    g->end_ns = xb_now_ns();
}

int xb_procs_run(struct xb_procs *g, int n, xb_proc_body body, void *arg)
{
    int ready_fd, go_fd;

    memset(g, 0, sizeof *g);
    g->n = n;
    start(g, body, arg, &ready_fd, &go_fd);
    wait_ready(g, ready_fd);
    int ready = xb_procs_said(g, XB_PROC_READY);
    g->start_ns = xb_now_ns();
    release(g, go_fd, ready == n);
    reap(g);
    return ready;
}

int xb_proc_ready(const struct xb_proc *self, char status)
{
    int said = write(self->ready_fd, &status, 1) == 1;
    char word = 0;

    /* Closed at once, so that the parent sees end-of-file rather than
     * waiting for a child that dies before it speaks. */
    close(self->ready_fd);
    if (!said || status != XB_PROC_READY)
        return 0;
    while (read(self->go_fd, &word, 1) < 0 && errno == EINTR)
        ;
    return word == 'g';
}

int xb_procs_said(const struct xb_procs *g, char status)
{
    int n = 0;

    for (int k = 0; k < g->n; k++)
        n += g->said[k] == status;
    return n;
}

void *xb_shared_new(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        xb_die_errno("mmap");
    return p;
}

void xb_shared_free(void *p, size_t bytes)
{
    munmap(p, bytes);
}
