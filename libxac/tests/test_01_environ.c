/* test_01_environ: every XAC_* variable is read strictly at xInit.
 *
 * For each variable of the table (src/xac_config.c): malformed values
 * make xInit return XAC_EINVAL in either mode, create nothing, and leave
 * a message (xEnvError) that names the variable and the values it takes;
 * good values are taken; a good xInit works afterwards.  The manual
 * (include/xac.h, "Environment") lists each variable with its default.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "xac_config.h"

struct values {
    const char *name;
    const char *bad[6];  /* NULL-terminated */
    const char *good[4]; /* NULL-terminated */
};

static const struct values cases[] = {
    {"XAC_KEEP_PAGES", {"yes", "2", "1 ", "01", "-1", NULL}, {"0", "1", NULL}},
    {"XAC_UFFD", {"on", "-1", "true", "0x1", NULL}, {"0", "1", NULL}},
    {"XAC_PTE", {"yes", "10", "off", NULL}, {"0", "1", NULL}},
    {"XAC_REUSE", {"2", "no", " 1", NULL}, {"0", "1", NULL}},
    {"XAC_SHARE", {"2", "yes", "1 ", NULL}, {"0", "1", NULL}},
    {"XAC_WORKING_MIB",
     {"0", "-5", "12x", "1048577", "99999999999999999999999", NULL},
     {"1", "256", "1048576", NULL}},
    {"XAC_POLICY",
     {"oldest-wins-typo", "OLDEST-WINS", "1", "selfabort", NULL},
     {"self-abort", "oldest-wins", "requester-wins", "polite"}},
    {"XAC_BACKOFF_US", {"abc", "-1", "4294967296", "10us", NULL},
     {"0", "100", "4294967295", NULL}},
    {"XAC_WRITERS", {"4097", "-1", "cpus", "2 ", NULL}, {"0", "1", "4096", NULL}},
    {"XAC_TURN_US", {"1000001", "-1", "1ms", NULL}, {"0", "1000", "1000000", NULL}},
    {"XAC_ESCALATE", {"1001", "never", "-8", NULL}, {"0", "8", "1000", NULL}},
    {"XAC_LOCK_SPIN_US", {"10001", "-1", "50us", NULL}, {"0", "50", "10000", NULL}},
    {"XAC_HANDOFF_US", {"10001", "-1", "100us", NULL}, {"0", "100", "10000", NULL}},
    {"XAC_SYNC", {"fsink", "FSYNC", "fdatasync ", "0", NULL},
     {"fdatasync", "fsync", "dsync", NULL}},
    {"XAC_LOG_LIMIT", {"4095", "2147483649", "3G", "64MB", "1T", NULL},
     {"4096", "65536", "64M", "2G"}},
    {"XAC_COMMIT_DELAY_US", {"abc", "4294967296", "-0", "200us", "2e2", NULL},
     {"0", "200", "600000000", NULL}},
    {"XAC_LOG_DIRECT", {"yes", "2", NULL}, {"0", "1", NULL}},
    {"XAC_LEAD_BY_CPU", {"no", "11", NULL}, {"0", "1", NULL}},
};

#define NCASES (sizeof cases / sizeof cases[0])

static const struct values *case_of(const char *name)
{
    size_t i;

    for (i = 0; i < NCASES; i++)
        if (strcmp(cases[i].name, name) == 0)
            return &cases[i];
    return NULL;
}

/* Does msg say what v takes: every choice, or its bounds? */
static int names_values(const struct xcfg_var *v, const char *msg)
{
    char num[32];
    size_t i;

    if (v->cv_kind == XCFG_FLAG)
        return strstr(msg, "0 or 1") != NULL;
    if (v->cv_kind == XCFG_ENUM) {
        for (i = 0; v->cv_choices[i] != NULL; i++)
            if (strstr(msg, v->cv_choices[i]) == NULL)
                return 0;
        return 1;
    }
    snprintf(num, sizeof num, " %llu ", v->cv_min);
    if (strstr(msg, num) == NULL)
        return 0;
    snprintf(num, sizeof num, " %llu", v->cv_max);
    return strstr(msg, num) != NULL;
}

/* xInit with name=value: XAC_EINVAL, nothing created, and a message that
 * names the variable and what it takes. */
static void refused(const struct xcfg_var *v, const char *value, int flags)
{
    const char *msg;
    char what[160];
    int rc;

    setenv(v->cv_name, value, 1);
    rc = xInit("envctl", flags);
    unsetenv(v->cv_name);
    msg = xEnvError();
    snprintf(what, sizeof what, "%s=\"%s\" (%s) is refused",
             v->cv_name, value, flags == DURABLE ? "DURABLE" : "NONDURABLE");
    test_cond(what, rc == XAC_EINVAL && access("envctl", F_OK) != 0);
    snprintf(what, sizeof what, "... its message names %s and its values",
             v->cv_name);
    test_cond(what, msg != NULL && strstr(msg, v->cv_name) != NULL &&
                        names_values(v, msg));
    if (rc == 0)
        xShutdown();
}

static void taken(const struct xcfg_var *v, const char *value, int flags)
{
    char what[160];
    int rc;

    setenv(v->cv_name, value, 1);
    rc = xInit("goodctl", flags);
    unsetenv(v->cv_name);
    snprintf(what, sizeof what, "%s=\"%s\" (%s) is taken", v->cv_name, value,
             flags == DURABLE ? "DURABLE" : "NONDURABLE");
    test_cond(what, rc == 0 && xEnvError() == NULL);
    if (rc == 0)
        E(xShutdown());
}

/* The manual's Environment section: the entry of each variable gives its
 * default. */
static void check_manual(const char *path)
{
    static char text[1 << 17];
    char want[96], def[32], what[128];
    const char *sec, *at, *next;
    FILE *f = fopen(path, "r");
    size_t n = f != NULL ? fread(text, 1, sizeof text - 1, f) : 0, i;
    const struct xcfg_var *v;

    if (f != NULL)
        fclose(f);
    text[n] = '\0';
    sec = strstr(text, "@section environment");
    test_cond("include/xac.h has an Environment section", sec != NULL);
    if (sec == NULL)
        return;
    for (i = 0; i < xcfg_nvars; i++) {
        v = &xcfg_vars[i];
        snprintf(want, sizeof want, " *   %s=", v->cv_name);
        at = strstr(sec, want);
        next = at != NULL ? strstr(at + strlen(want), " *   XAC_") : NULL;
        if (next == NULL && at != NULL)
            next = strstr(at, "@section");
        if (v->cv_kind == XCFG_ENUM)
            snprintf(def, sizeof def, "(default %s)", v->cv_choices[0]);
        else
            snprintf(def, sizeof def, "(default %llu", v->cv_def);
        snprintf(what, sizeof what, "the manual lists %s with its default",
                 v->cv_name);
        at = at != NULL ? strstr(at, def) : NULL;
        test_cond(what, at != NULL && next != NULL && at < next);
    }
}

static const char fsink[] =
    "XAC_SYNC=\"fsink\" is not valid: XAC_SYNC takes fdatasync, fsync or "
    "dsync (default fdatasync)";

int main(void)
{
    size_t i, k;
    const struct values *c;
    const struct xcfg_var *v;
    struct xac_stats st;
    char manual[512], what[96];

    /* The source tree's header: tests run from libxac/ (make check). */
    snprintf(manual, sizeof manual, "%.*s/../include/xac.h",
             (int)(strrchr(__FILE__, '/') - __FILE__), __FILE__);
    check_manual(manual);
    tu_tmpdir();

    test_cond("the table has the 18 variables", xcfg_nvars == 18);
    test_cond("xEnvError before any refusal", xEnvError() == NULL);
    for (i = 0; i < xcfg_nvars; i++) {
        v = &xcfg_vars[i];
        c = case_of(v->cv_name);
        snprintf(what, sizeof what, "%s has test values", v->cv_name);
        test_cond(what, c != NULL);
        if (c == NULL)
            continue;
        for (k = 0; k < 6 && c->bad[k] != NULL; k++)
            refused(v, c->bad[k], NONDURABLE);
        refused(v, c->bad[0], DURABLE);
        for (k = 0; k < 4 && c->good[k] != NULL; k++)
            taken(v, c->good[k], NONDURABLE);
    }

    /* Three values that earlier versions took silently. */
    setenv("XAC_POLICY", "oldest-wins-typo", 1);
    test_cond("XAC_POLICY=oldest-wins-typo is refused",
              xInit("envctl", NONDURABLE) == XAC_EINVAL);
    unsetenv("XAC_POLICY");
    setenv("XAC_COMMIT_DELAY_US", "abc", 1);
    test_cond("XAC_COMMIT_DELAY_US=abc is refused, NONDURABLE too",
              xInit("envctl", NONDURABLE) == XAC_EINVAL &&
                  strstr(xEnvError(), "XAC_COMMIT_DELAY_US") != NULL);
    unsetenv("XAC_COMMIT_DELAY_US");
    setenv("XAC_SYNC", "fsink", 1);
    test_cond("XAC_SYNC=fsink is refused, with the message in full",
              xInit("envctl", DURABLE) == XAC_EINVAL &&
                  strcmp(xEnvError(), fsink) == 0);
    unsetenv("XAC_SYNC");
    test_cond("nothing was created", access("envctl", F_OK) != 0);

    /* A refusal leaves no state: a good xInit works, and takes values. */
    setenv("XAC_SYNC", "fsync", 1);
    setenv("XAC_WORKING_MIB", "3", 1);
    setenv("XAC_KEEP_PAGES", "0", 1);
    setenv("XAC_LOG_LIMIT", "8K", 1);
    test_cond("a good xInit after the refusals", xInit("ctl", DURABLE) == 0);
    test_cond("... and xEnvError is clear", xEnvError() == NULL);
    st = tu_stats();
    test_cond("... XAC_SYNC=fsync is in effect",
              st.sync_method == XAC_SYNC_FSYNC);
    test_cond("... XAC_WORKING_MIB=3 is in effect", st.working_mib == 3);
    test_cond("... XAC_KEEP_PAGES=0 is in effect", st.keep_pages == 0);
    unsetenv("XAC_SYNC");
    unsetenv("XAC_WORKING_MIB");
    unsetenv("XAC_KEEP_PAGES");
    unsetenv("XAC_LOG_LIMIT");
    test_cond("xShutdown", xShutdown() == 0);
    return test_report();
}
