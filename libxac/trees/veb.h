/* veb.h: the van Emde Boas layout of a complete binary tree (thesis
 * section 5.1, figure 5-2).
 *
 * A tree of height h (levels) is cut at depth floor(h/2): the top tree of
 * height floor(h/2) is stored first, then its 2^floor(h/2) bottom trees of
 * height ceil(h/2) left to right, each laid out the same way, recursively.
 *
 * Nodes are named by their breadth-first index: the root is 1, the
 * children of i are 2i and 2i+1, depth d holds 2^(d-1) .. 2^d - 1 (the
 * root has depth 1).  Navigation uses the per-depth tables of Brodal,
 * Fagerberg and Jacob ("Cache oblivious search trees via binary trees of
 * small height", SODA 2002): a node at depth d is the root of a bottom tree
 * of size B[d] hanging below a top tree of size T[d] whose root has depth
 * D[d], so with pos[] the positions of the nodes on the path so far,
 *
 *     pos(i at depth d) = pos[D[d]] + T[d] + (i mod 2^(d-D[d])) * B[d].
 *
 * The tables are O(h) words in process memory; nothing but the nodes is
 * stored in the file.
 */
#ifndef VEB_H
#define VEB_H

#include <stdint.h>

#define VEB_MAX_HEIGHT 48

struct veb {
    int v_height;
    uint64_t v_T[VEB_MAX_HEIGHT + 1], v_B[VEB_MAX_HEIGHT + 1];
    int v_D[VEB_MAX_HEIGHT + 1];
};

/* Tables for a tree of height (levels) 1 .. VEB_MAX_HEIGHT. */
void veb_init(struct veb *v, int height);

/* Position of the node with breadth-first index bfs (O(height) time). */
uint64_t veb_pos(const struct veb *v, uint64_t bfs);

/* Position of node bfs at depth d, given pos[] of its ancestors. */
static inline uint64_t veb_step(const struct veb *v, const uint64_t *pos,
                                uint64_t bfs, int d)
{
    int top = v->v_D[d];
    uint64_t mask = ((uint64_t)1 << (d - top)) - 1;
    return pos[top] + v->v_T[d] + (bfs & mask) * v->v_B[d];
}

#endif
