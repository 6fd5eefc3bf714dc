/* options.h: the command-line parser every benchmark program shares.
 *
 * A program describes its options in a table ending with {0}:
 *
 *   long long reps = -1;               // -1: "not given", resolved later
 *   int quick = 0;
 *   const char *dir = NULL;
 *   static const char *const modes[] = {"durable", "nosync", NULL};
 *   const char *mode = "durable";
 *   struct xb_opt opts[] = {
 *       {"quick", XB_OPT_FLAG, &quick, 0, 0, NULL, "small sizes, under 15 s"},
 *       {"reps", XB_OPT_INT, &reps, 1, 1000000, NULL, "repetitions"},
 *       {"dir", XB_OPT_STR, &dir, 0, 0, NULL, "directory under test"},
 *       {"mode", XB_OPT_CHOICE, &mode, 0, 0, modes, "durability mode"},
 *       {0}};
 *   xb_opts_parse(argc, argv, "storage_x: what it measures", opts);
 *
 * Options are written "--name value" or "--name=value".  "--help" prints
 * the usage on stdout and exits 0.  Anything else that does not fit the
 * table (unknown option, missing or malformed value, integer outside
 * [min, max], value not among the choices, positional argument) prints one
 * sentence on stderr and exits 2.  Values are only written for options that
 * appear, so the variable's initial value is the default.
 */
#ifndef XB_OPTIONS_H
#define XB_OPTIONS_H

enum xb_opt_kind {
    XB_OPT_FLAG,   /* int *: set to 1 when present */
    XB_OPT_INT,    /* long long *: checked against [min, max] */
    XB_OPT_NUM,    /* double *: checked against [min, max] */
    XB_OPT_STR,    /* const char **: any non-empty string */
    XB_OPT_CHOICE  /* const char **: one of choices (NULL-terminated) */
};

struct xb_opt {
    const char *name; /* without the leading "--"; NULL ends the table */
    enum xb_opt_kind kind;
    void *value;
    long long min, max;
    const char *const *choices;
    const char *help;
};

void xb_opts_parse(int argc, char **argv, const char *synopsis,
                   const struct xb_opt *opts);

#endif
