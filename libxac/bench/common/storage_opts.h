/* storage_opts.h: the options every storage-suite program accepts.
 *
 * The agent runs every program of a suite with the same arguments
 * (docs/suites.md), so each storage program accepts the whole set below,
 * even the knobs it has no use for; its --help says which ones it ignores.
 *
 *   --quick          small sizes, whole program in about 15 s
 *   --dir PATH       directory under test (default $TMPDIR, else /tmp);
 *                    the program works in a fresh subdirectory it removes
 *   --reps N         repetitions (each program documents what one is)
 *   --pages N        pages in the file under test
 *   --file-mib N     size of the preallocated journal file, MiB
 *
 * Numeric fields stay -1 when the option is absent; the program then picks
 * its own quick or full default.
 */
#ifndef XB_STORAGE_OPTS_H
#define XB_STORAGE_OPTS_H

struct xb_storage_opts {
    int quick;
    const char *dir;
    long long reps, pages, file_mib;
};

/* pages_help / file_mib_help: what the knob means to this program, or NULL
 * if the program ignores it. */
void xb_storage_opts_parse(int argc, char **argv, const char *synopsis,
                           const char *reps_help, const char *pages_help,
                           const char *file_mib_help,
                           struct xb_storage_opts *o);

/* o->field if given, else quick_default or full_default. */
long long xb_pick(long long given, int quick, long long quick_default,
                  long long full_default);

#endif
