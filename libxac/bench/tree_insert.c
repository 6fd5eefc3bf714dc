/* tree_insert: the LIBXAC search trees against the Berkeley DB and LMDB
 * baselines (thesis chapter 5, appendix C.6): the same driver, options,
 * workload and results as bdb_insert and lmdb_insert, for one tree
 * configuration.  See trees/tree_kv.h and docs/trees.md. */
#include "tree_kv.h"

int main(int argc, char **argv)
{
    static const struct tk_program pg = {
        "tree_insert",
        "LIBXAC B+-tree or CO B-tree: 64-bit keys, 512-byte values, one\n"
        "transaction per operation; see docs/trees.md.",
        0, "transactional", "insert"};
    return xb_kv_main(argc, argv, tk_store(&pg));
}
