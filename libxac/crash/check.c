/* check.c: reopen a store after a crash and check it (crash.h). */
#include "crash.h"

#include "clock.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void why(struct xc_check *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Keep the first violation's sentence. */
static void why(struct xc_check *c, const char *fmt, ...)
{
    va_list ap;
    if (c->why[0] != '\0')
        return;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
}

static int value_ok(uint64_t key, const unsigned char *v, size_t len,
                    uint32_t value_bytes)
{
    unsigned char want[XB_KV_MAX_VALUE];
    xb_workload_value(key, want, value_bytes);
    return len == value_bytes && memcmp(want, v, len) == 0;
}

/* In the child: the check itself. */
static void check(const struct xc_run *run, const char *dir,
                  const unsigned char *expect, size_t n, struct xc_check *c)
{
    const struct xb_kv_store *st = run->st;
    const struct xb_kv_config *cfg = run->cfg;
    void *h = NULL;
    uint64_t t0 = xb_now_ns();
    int rc = st->open(cfg, dir, XB_KV_RECOVER, &h);
    c->recovery_ms = (double)(xb_now_ns() - t0) / 1e6;
    for (size_t i = 0; i < n; i++)
        c->acked += expect[i] == XC_PRESENT;
    if (rc != 0) {
        c->violations++;
        c->lost = c->acked;
        why(c, "the store did not open after the crash (open returned %d)",
            rc);
        return;
    }
    if (st->observe && st->observe(h, &c->counters) == 0)
        c->observed = 1;
    long long found = 0;
    unsigned char v[XB_KV_MAX_VALUE];
    for (size_t i = 0; i < n; i++) {
        struct xb_kv_key key = {run->keys[i], {0}};
        xb_key_encode(key.n, key.bytes);
        size_t len = cfg->value_bytes;
        int got = st->search(h, &key, v, &len);
        if (got < 0) {
            c->violations++;
            why(c, "searching key index %zu failed", i);
            continue;
        }
        found += got;
        if (got && !value_ok(key.n, v, len, cfg->value_bytes)) {
            c->violations++;
            why(c, "key index %zu has a wrong value (torn)", i);
        }
        if (expect[i] == XC_PRESENT && !got) {
            c->lost++;
            why(c, "acknowledged key index %zu is lost", i);
        } else if (expect[i] == XC_ABSENT && got) {
            c->uncommitted++;
            why(c, "key index %zu is visible but was never acknowledged "
                   "nor in flight", i);
        } else if (expect[i] == XC_EITHER && got) {
            c->in_flight++;
            c->in_flight_present = 1;
        }
    }
    long long scanned = st->scan(h);
    if (scanned != found) {
        c->violations++;
        why(c, "a scan visits %lld records, the lookups found %lld",
            scanned, found);
    }
    char reason[200] = "";
    if (st->check && st->check(h, reason, sizeof reason) != 0) {
        c->violations++;
        why(c, "the store's check failed: %s", reason);
    }
    if (st->close(h) != 0) {
        c->violations++;
        why(c, "closing the recovered store failed");
    }
}

/* The first line the recovery wrote on stderr, appended to c->why. */
static void add_stderr(const char *log, struct xc_check *c)
{
    char line[160] = "";
    FILE *f = fopen(log, "r");
    if (f == NULL)
        return;
    if (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        size_t used = strlen(c->why);
        snprintf(c->why + used, sizeof c->why - used, " (it said: %s)", line);
    }
    fclose(f);
}

int xc_check_store(const struct xc_run *run, const char *dir,
                   const unsigned char *expect, size_t n, struct xc_check *c)
{
    /* What the store says while it recovers goes to a file, not to the
     * job's log (Berkeley DB complains at every recovery from a power
     * cut about the regions it then removes); a finding quotes it. */
    char log[4096];
    xb_path(log, sizeof log, run->scratch, "recovery.stderr");
    int fd[2];
    memset(c, 0, sizeof *c);
    if (pipe(fd) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
        int lf = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (lf >= 0) {
            dup2(lf, 2);
            close(lf);
        }
        alarm(XC_RECOVER_LIMIT);
        struct xc_check mine;
        memset(&mine, 0, sizeof mine);
        check(run, dir, expect, n, &mine);
        ssize_t w = write(fd[1], &mine, sizeof mine);
        _exit(w == (ssize_t)sizeof mine ? 0 : 1);
    }
    close(fd[1]);
    size_t got = 0;
    while (got < sizeof *c) {
        ssize_t r = read(fd[0], (char *)c + got, sizeof *c - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (got != sizeof *c) {
        memset(c, 0, sizeof *c);
        for (size_t i = 0; i < n; i++)
            c->acked += expect[i] == XC_PRESENT;
        c->violations = 1;
        c->lost = c->acked;
        snprintf(c->why, sizeof c->why, "the recovery %s %d",
                 WIFSIGNALED(status) ? "died of signal" : "exited with",
                 WIFSIGNALED(status) ? WTERMSIG(status)
                                     : WEXITSTATUS(status));
    }
    if (c->lost || c->uncommitted || c->violations)
        add_stderr(log, c);
    return 0;
}

int xc_tally_add(struct xc_tally *t, const struct xc_check *c)
{
    if (c->observed && t->points == 0)
        t->counters = c->counters;
    t->recovery_ms[t->points++] = c->recovery_ms;
    t->acked += c->acked;
    t->lost += c->lost;
    t->uncommitted += c->uncommitted;
    t->in_flight += c->in_flight;
    t->violations += c->violations;
    int finding = c->lost || c->uncommitted || c->violations;
    t->findings += finding;
    return finding;
}
