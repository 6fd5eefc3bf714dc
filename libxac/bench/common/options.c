/* options.c: see options.h. */
#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(const char *prog, const char *synopsis,
                  const struct xb_opt *opts)
{
    printf("usage: %s [options]\n%s\n\noptions:\n", prog, synopsis);
    for (const struct xb_opt *o = opts; o->name != NULL; o++) {
        char left[64];
        switch (o->kind) {
        case XB_OPT_FLAG:
            snprintf(left, sizeof left, "--%s", o->name);
            break;
        case XB_OPT_INT:
            snprintf(left, sizeof left, "--%s N", o->name);
            break;
        case XB_OPT_NUM:
            snprintf(left, sizeof left, "--%s X", o->name);
            break;
        case XB_OPT_STR:
            snprintf(left, sizeof left, "--%s PATH", o->name);
            break;
        case XB_OPT_CHOICE:
            snprintf(left, sizeof left, "--%s WORD", o->name);
            break;
        }
        printf("  %-22s %s", left, o->help);
        if (o->kind == XB_OPT_INT)
            printf(" [%lld..%lld]", o->min, o->max);
        if (o->kind == XB_OPT_CHOICE) {
            printf(" (");
            for (const char *const *c = o->choices; *c != NULL; c++)
                printf("%s%s", c == o->choices ? "" : "|", *c);
            printf(")");
        }
        printf("\n");
    }
    printf("  %-22s %s\n", "--help", "print this help and exit");
}

static void bad(const char *prog, const char *fmt, const char *a,
                const char *b)
{
    fprintf(stderr, "%s: ", prog);
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, " (try --help).\n");
    exit(2);
}

static void set_value(const char *prog, const struct xb_opt *o,
                      const char *v)
{
    char *end;
    switch (o->kind) {
    case XB_OPT_FLAG:
        break;
    case XB_OPT_INT: {
        errno = 0;
        long long x = strtoll(v, &end, 10);
        if (errno != 0 || end == v || *end != '\0')
            bad(prog, "--%s needs an integer, not \"%s\"", o->name, v);
        if (x < o->min || x > o->max)
            bad(prog, "--%s %s is out of range", o->name, v);
        *(long long *)o->value = x;
        break;
    }
    case XB_OPT_NUM: {
        errno = 0;
        double x = strtod(v, &end);
        if (errno != 0 || end == v || *end != '\0')
            bad(prog, "--%s needs a number, not \"%s\"", o->name, v);
        if (x < (double)o->min || x > (double)o->max)
            bad(prog, "--%s %s is out of range", o->name, v);
        *(double *)o->value = x;
        break;
    }
    case XB_OPT_STR:
        if (*v == '\0')
            bad(prog, "--%s needs a non-empty value%s", o->name, "");
        *(const char **)o->value = v;
        break;
    case XB_OPT_CHOICE:
        for (const char *const *c = o->choices; *c != NULL; c++) {
            if (strcmp(*c, v) == 0) {
                *(const char **)o->value = *c;
                return;
            }
        }
        bad(prog, "--%s does not accept \"%s\"", o->name, v);
    }
}

void xb_opts_parse(int argc, char **argv, const char *synopsis,
                   const struct xb_opt *opts)
{
    const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1
                                             : argv[0];
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(prog, synopsis, opts);
            exit(0);
        }
        if (strncmp(arg, "--", 2) != 0)
            bad(prog, "unexpected argument \"%s\"%s", arg, "");
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const struct xb_opt *o = opts;
        while (o->name != NULL &&
               (strlen(o->name) != len || strncmp(o->name, name, len) != 0))
            o++;
        if (o->name == NULL)
            bad(prog, "unknown option \"%s\"%s", arg, "");
        if (o->kind == XB_OPT_FLAG) {
            if (eq != NULL)
                bad(prog, "--%s takes no value%s", o->name, "");
            *(int *)o->value = 1;
            continue;
        }
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (v == NULL)
            bad(prog, "--%s needs a value%s", o->name, "");
        set_value(prog, o, v);
    }
}
