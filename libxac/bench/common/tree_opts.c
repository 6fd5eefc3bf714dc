/* tree_opts.c: see tree_opts.h. */
#include "tree_opts.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

const char *const xb_st_durabilities[] = {"durable", "nondurable", NULL};
const char *const xb_st_trees[] = {"btree", "btree-advisory", "cobtree", "all",
                                   NULL};

int xb_st_baseline_skips(const char *prog, const char *tree)
{
    if (tree == NULL || strcmp(tree, "all") == 0)
        return 0;
    fprintf(stderr,
            "%s: --tree %s selects one LIBXAC tree; this baseline measures its "
            "own B-tree only with --tree all or without --tree, so it "
            "measures nothing here.\n",
            prog, tree);
    return 1;
}
