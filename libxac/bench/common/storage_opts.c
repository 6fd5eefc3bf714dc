/* storage_opts.c: see storage_opts.h. */
#include "storage_opts.h"

#include "options.h"

#include <stddef.h>

#define IGNORED "accepted for the storage suite; not used by this program"

void xb_storage_opts_parse(int argc, char **argv, const char *synopsis,
                           const char *reps_help, const char *pages_help,
                           const char *file_mib_help,
                           struct xb_storage_opts *o)
{
    o->quick = 0;
    o->dir = NULL;
    o->reps = o->pages = o->file_mib = -1;
    const struct xb_opt opts[] = {
        {"quick", XB_OPT_FLAG, &o->quick, 0, 0, NULL,
         "small sizes: the whole program runs in about 15 s"},
        {"dir", XB_OPT_STR, &o->dir, 0, 0, NULL,
         "directory under test (default $TMPDIR, else /tmp)"},
        {"reps", XB_OPT_INT, &o->reps, 1, 1000000, NULL,
         reps_help ? reps_help : IGNORED},
        {"pages", XB_OPT_INT, &o->pages, 1, 10000000, NULL,
         pages_help ? pages_help : IGNORED},
        {"file-mib", XB_OPT_INT, &o->file_mib, 1, 65536, NULL,
         file_mib_help ? file_mib_help : IGNORED},
        {NULL, 0, NULL, 0, 0, NULL, NULL}};
    xb_opts_parse(argc, argv, synopsis, opts);
}

long long xb_pick(long long given, int quick, long long quick_default,
                  long long full_default)
{
    if (given >= 0)
        return given;
    return quick ? quick_default : full_default;
}
