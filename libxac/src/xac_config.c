/* xac_config.c: the table of XAC_* environment variables and its strict
 * parser (xac_config.h).  A value is taken exactly or refused: no partial
 * numbers ("12x"), no signs, no unknown names, no silent fallback to the
 * default; unset or empty means the default.
 */
#include "xac_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xac.h"

_Static_assert(XAC_POLICY_SELF_ABORT == 0 && XAC_POLICY_OLDEST_WINS == 1 &&
                   XAC_POLICY_REQUESTER_WINS == 2 && XAC_POLICY_POLITE == 3,
               "XAC_POLICY choices are in XAC_POLICY_* order");
_Static_assert(XAC_SYNC_FDATASYNC == 0 && XAC_SYNC_FSYNC == 1 &&
                   XAC_SYNC_DSYNC == 2,
               "XAC_SYNC choices are in XAC_SYNC_* order");

static const char *const policies[] = {"self-abort", "oldest-wins",
                                       "requester-wins", "polite", NULL};
static const char *const syncs[] = {"fdatasync", "fsync", "dsync", NULL};

#define FLAG(name, field, def, doc)                                        \
    {name, XCFG_FLAG, offsetof(struct xcfg, field), NULL, 0, 1, def, doc}
#define ENUM(name, field, choices, doc)                                    \
    {name, XCFG_ENUM, offsetof(struct xcfg, field), choices, 0, 0, 0, doc}
#define RANGE(name, field, lo, hi, def, doc)                               \
    {name, XCFG_RANGE, offsetof(struct xcfg, field), NULL, lo, hi, def, doc}
#define SIZE(name, field, lo, hi, def, doc)                                \
    {name, XCFG_SIZE, offsetof(struct xcfg, field), NULL, lo, hi, def, doc}

const struct xcfg_var xcfg_vars[] = {
    FLAG("XAC_KEEP_PAGES", cf_keep_pages, 1,
         "keep pages readable between transactions (xSetKeepPages)"),
    FLAG("XAC_UFFD", cf_uffd, 1,
         "the segment may use userfaultfd at all"),
    FLAG("XAC_PTE", cf_pte, 1,
         "grant and revoke access through page-table entries"),
    FLAG("XAC_REUSE", cf_reuse, 1,
         "a fault skips the copy of a version the working memory holds"),
    FLAG("XAC_SHARE", cf_share, 1,
         "queries map unchanged pages from the data file, not copies"),
    /* 256 MiB keeps a 250,000-key B+-tree of 512-byte values. */
    RANGE("XAC_WORKING_MIB", cf_working_mib, 1, 1048576, 256,
          "MiB of page copies held before the working memory is emptied"),
    ENUM("XAC_POLICY", cf_policy, policies,
         "conflict policy (xSetPolicy)"),
    RANGE("XAC_BACKOFF_US", cf_backoff_us, 0, 4294967295ull, 0,
          "maximum backoff after a conflict abort, us (xSetPolicy)"),
    /* 0: a place per CPU and one more, two per CPU for durable writers,
     * which wait for the log (xcn_default_writers); XCTL_SLOTS is more
     * than ever run. */
    RANGE("XAC_WRITERS", cf_writers, 0, 4096, 0,
          "update transactions running at once; 0 = the CPUs + 1 (twice "
          "the CPUs for DURABLE), 4096 = all"),
    /* 250 us: 2 or 3 nondurable inserts of 64 processes on 2 CPUs.  The
     * turn hardly moves throughput between 50 us and 4 ms, but a waiter
     * waits for the turns of the processes queued before it: at 64
     * processes 1 ms made the slowest 0.1 % of nondurable inserts 57-92
     * ms, 250 us 35-42 ms (docs/benchmarks-scaling.md, "Shorter
     * turns"). */
    RANGE("XAC_TURN_US", cf_turn_us, 0, 1000000, 250,
          "an admitted writer's turn: its next transactions within it keep "
          "their place, us; 0 = every transaction waits anew"),
    RANGE("XAC_ESCALATE", cf_escalate, 0, 1000, 8,
          "conflict aborts before a transaction runs irrevocable, 0 = never"),
    /* 50 us: longer than a nondurable commit holds ch_lock, short next
     * to a time slice (docs/benchmarks-scaling.md, "Spinning on the
     * commit lock"). */
    RANGE("XAC_LOCK_SPIN_US", cf_lock_spin_us, 0, 10000, 50,
          "how long a process that finds the commit lock held spins "
          "before it sleeps, us; 0 = it sleeps at once"),
    /* 100 us: the woken waiter usually runs within a few; the bound only
     * matters when it does not come (docs/benchmarks-scaling.md,
     * "Handing the place over"). */
    RANGE("XAC_HANDOFF_US", cf_handoff_us, 0, 10000, 100,
          "how long a process whose turn ended yields its CPU to the "
          "waiter it woke before it sleeps, us; 0 = it sleeps at once"),
    ENUM("XAC_SYNC", cf_sync, syncs,
         "how the log is made stable (xSetSyncMethod)"),
    SIZE("XAC_LOG_LIMIT", cf_log_limit, 4096, 1ull << 31, 64ull << 20,
         "size at which a log file is closed and the next started"),
    RANGE("XAC_COMMIT_DELAY_US", cf_commit_delay_us, 0, 4294967295ull, 200,
          "how long a group-commit leader waits for running siblings, us"),
    FLAG("XAC_LOG_DIRECT", cf_log_direct, 1,
         "an alone commit writes its record with O_DIRECT | O_DSYNC"),
    FLAG("XAC_LEAD_BY_CPU", cf_lead_by_cpu, 1,
         "leave the group-commit lead to a CPU with faster syncs"),
};

const size_t xcfg_nvars = sizeof xcfg_vars / sizeof xcfg_vars[0];

/* A decimal whole number, nothing else, without overflow.  0 or -1. */
static int parse_number(const char *s, unsigned long long *out,
                        const char **rest)
{
    unsigned long long v = 0;

    if (*s < '0' || *s > '9')
        return -1;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (~0ull - (unsigned long long)(*s - '0')) / 10)
            return -1;
        v = v * 10 + (unsigned long long)(*s - '0');
    }
    *out = v;
    *rest = s;
    return 0;
}

/* Parse s as variable v.  0 or -1. */
static int parse(const struct xcfg_var *v, const char *s,
                 unsigned long long *out)
{
    unsigned long long n, mul = 1;
    const char *rest;
    size_t i;

    switch (v->cv_kind) {
    case XCFG_FLAG:
        if (strcmp(s, "0") != 0 && strcmp(s, "1") != 0)
            return -1;
        *out = *s == '1';
        return 0;
    case XCFG_ENUM:
        for (i = 0; v->cv_choices[i] != NULL; i++) {
            if (strcmp(s, v->cv_choices[i]) == 0) {
                *out = i;
                return 0;
            }
        }
        return -1;
    case XCFG_SIZE:
    case XCFG_RANGE:
        if (parse_number(s, &n, &rest) != 0)
            return -1;
        if (v->cv_kind == XCFG_SIZE && *rest != '\0' && rest[1] == '\0') {
            mul = *rest == 'K' || *rest == 'k'   ? 1ull << 10
                  : *rest == 'M' || *rest == 'm' ? 1ull << 20
                  : *rest == 'G' || *rest == 'g' ? 1ull << 30
                                                 : 0;
            if (mul == 0 || n > ~0ull / mul)
                return -1;
            rest++;
        }
        if (*rest != '\0' || n * mul < v->cv_min || n * mul > v->cv_max)
            return -1;
        *out = n * mul;
        return 0;
    }
    return -1;
}

/* What v takes, as a phrase: "0 or 1 (default 1)". */
static void describe(const struct xcfg_var *v, char *buf, size_t n)
{
    size_t i, len = 0;

    switch (v->cv_kind) {
    case XCFG_FLAG:
        snprintf(buf, n, "0 or 1 (default %llu)", v->cv_def);
        return;
    case XCFG_ENUM:
        buf[0] = '\0';
        for (i = 0; v->cv_choices[i] != NULL && len < n; i++) {
            const char *sep = i == 0                          ? ""
                              : v->cv_choices[i + 1] == NULL ? " or "
                                                              : ", ";
            len += (size_t)snprintf(buf + len, n - len, "%s%s", sep,
                                    v->cv_choices[i]);
        }
        if (len < n)
            snprintf(buf + len, n - len, " (default %s)",
                     v->cv_choices[v->cv_def]);
        return;
    case XCFG_RANGE:
        snprintf(buf, n, "a whole number from %llu to %llu (default %llu)",
                 v->cv_min, v->cv_max, v->cv_def);
        return;
    case XCFG_SIZE:
        snprintf(buf, n,
                 "a size in bytes from %llu to %llu, with an optional K, M "
                 "or G suffix (default %llu)",
                 v->cv_min, v->cv_max, v->cv_def);
        return;
    }
}

int xcfg_read(struct xcfg *cf, char *msg, size_t n)
{
    unsigned long long val;
    const struct xcfg_var *v;
    const char *s;
    char takes[160];
    size_t i;

    for (i = 0; i < xcfg_nvars; i++) {
        v = &xcfg_vars[i];
        s = getenv(v->cv_name);
        val = v->cv_def;
        if (s != NULL && *s != '\0' && parse(v, s, &val) != 0) {
            describe(v, takes, sizeof takes);
            snprintf(msg, n, "%s=\"%.64s\" is not valid: %s takes %s",
                     v->cv_name, s, v->cv_name, takes);
            return XAC_EINVAL;
        }
        memcpy((char *)cf + v->cv_off, &val, sizeof val);
    }
    return 0;
}
