/* test_20_tree_veb: the van Emde Boas layout tables (trees/veb.h) against a
 * direct recursive construction, for every height up to 14. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "support/testhelp.h"
#include "veb.h"

/* Emit the breadth-first indices of the tree of height h rooted at bfs in
 * vEB order (top tree of height floor(h/2), then the bottom trees). */
static void layout(uint64_t bfs, int h, uint64_t *out, uint64_t *n)
{
    if (h == 1) {
        out[(*n)++] = bfs;
        return;
    }
    int ht = h / 2, hb = h - ht;
    layout(bfs, ht, out, n);
    for (uint64_t j = 0; j < ((uint64_t)1 << ht); j++)
        layout((bfs << ht) + j, hb, out, n);
}

int main(void)
{
    int ok_direct = 1, ok_perm = 1, ok_step = 1;
    for (int h = 1; h <= 14; h++) {
        uint64_t nodes = ((uint64_t)1 << h) - 1, n = 0;
        uint64_t *order = malloc(nodes * sizeof *order);
        unsigned char *seen = calloc(nodes, 1);
        E_ALLOC(order);
        E_ALLOC(seen);
        struct veb v;
        veb_init(&v, h);
        layout(1, h, order, &n);
        for (uint64_t p = 0; p < nodes; p++)
            if (veb_pos(&v, order[p]) != p)
                ok_direct = 0;
        for (uint64_t i = 1; i <= nodes; i++) {
            uint64_t p = veb_pos(&v, i);
            if (p >= nodes || seen[p]++)
                ok_perm = 0;
        }
        /* Walk every root-to-leaf path with veb_step. */
        for (uint64_t leaf = (uint64_t)1 << (h - 1); leaf <= nodes; leaf++) {
            uint64_t pos[VEB_MAX_HEIGHT + 2];
            pos[1] = 0;
            for (int d = 2; d <= h; d++) {
                uint64_t anc = leaf >> (h - d);
                pos[d] = veb_step(&v, pos, anc, d);
                if (pos[d] != veb_pos(&v, anc))
                    ok_step = 0;
            }
        }
        free(order);
        free(seen);
    }
    test_cond("veb_pos matches the recursive layout (heights 1..14)",
              ok_direct);
    test_cond("veb_pos is a permutation of 0 .. 2^h-2", ok_perm);
    test_cond("veb_step along every path agrees with veb_pos", ok_step);
    {
        struct veb v;
        veb_init(&v, 5);
        /* Figure 5-2 (right): height 5 → top tree of height 2 (nodes
         * 1,2,3 at positions 0..2), then bottom trees of height 3. */
        test_cond("height 5: root, its children, then 4's subtree",
                  veb_pos(&v, 1) == 0 && veb_pos(&v, 2) == 1 &&
                      veb_pos(&v, 3) == 2 && veb_pos(&v, 4) == 3 &&
                      veb_pos(&v, 8) == 4 && veb_pos(&v, 16) == 5 &&
                      veb_pos(&v, 17) == 6 && veb_pos(&v, 9) == 7 &&
                      veb_pos(&v, 5) == 10);
    }
    return test_report();
}
