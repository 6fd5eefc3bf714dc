/* veb.c: see veb.h. */
#include "veb.h"

static void veb_split(struct veb *v, int top, int h)
{
    if (h <= 1)
        return;
    int ht = h / 2, hb = h - ht, d = top + ht;
    v->v_D[d] = top;
    v->v_T[d] = ((uint64_t)1 << ht) - 1;
    v->v_B[d] = ((uint64_t)1 << hb) - 1;
    veb_split(v, top, ht);
    veb_split(v, d, hb);
}

void veb_init(struct veb *v, int height)
{
    v->v_height = height;
    for (int d = 0; d <= VEB_MAX_HEIGHT; d++) {
        v->v_T[d] = v->v_B[d] = 0;
        v->v_D[d] = 0;
    }
    veb_split(v, 1, height);
}

static int veb_depth(uint64_t bfs)
{
    return 64 - __builtin_clzll(bfs);
}

uint64_t veb_pos(const struct veb *v, uint64_t bfs)
{
    int d = veb_depth(bfs);
    if (d == 1)
        return 0;
    int top = v->v_D[d];
    uint64_t anc = bfs >> (d - top);
    uint64_t mask = ((uint64_t)1 << (d - top)) - 1;
    return veb_pos(v, anc) + v->v_T[d] + (bfs & mask) * v->v_B[d];
}
