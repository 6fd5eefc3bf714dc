/* tree_blocks: B+-tree block sizes 4 KiB .. 256 KiB against the CO B-tree
 * (thesis tables 5.1 and 5.2): by default random searches on static trees
 * built by the serial version on plain mmap; --op insert or scan for the
 * other columns of table 5.2.  See trees/tree_kv.h and docs/trees.md. */
#include "tree_kv.h"

int main(int argc, char **argv)
{
    static const struct tk_program pg = {
        "tree_blocks",
        "Every B+-tree block size 4 KiB .. 256 KiB, then the CO B-tree, on\n"
        "the same keys (thesis tables 5.1, 5.2); see docs/trees.md.",
        1, "serial", "search"};
    return xb_kv_main(argc, argv, tk_store(&pg));
}
