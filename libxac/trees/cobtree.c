/* cobtree.c: see cobtree.h. */
#include "cobtree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terr.h"
#include "tfile.h"

/* The geometry of the current array, read from the header. */
struct co_geo {
    uint64_t g_cap, g_segs;
    uint32_t g_seg_slots, g_lg;
    uint64_t *g_keys;
    unsigned char *g_vals;
    uint32_t *g_cnt;
    struct co_node *g_idx;
    uint16_t *g_slot;
};

/* The arrays of one geometry, in allocation order: keys, values, counts,
 * the index, value slots. */
#define CO_NARRAYS 5

static uint32_t co_seg_slots(uint64_t cap)
{
    uint32_t lg = 0, s = 8;
    while (((uint64_t)1 << lg) < cap)
        lg++;
    while (s < lg)
        s *= 2;
    return s;
}

static uint32_t co_lg(uint64_t x)
{
    uint32_t lg = 0;
    while (((uint64_t)1 << lg) < x)
        lg++;
    return lg;
}

static void co_geo(struct co_tree *t, struct co_geo *g)
{
    const struct tf_header *h = tf_header(t->co_s);
    g->g_cap = h->h_co_capacity;
    g->g_seg_slots = h->h_co_seg_slots;
    g->g_lg = h->h_co_lg_segs;
    g->g_segs = (uint64_t)1 << g->g_lg;
    g->g_keys = ts_at(t->co_s, h->h_co_keys);
    g->g_vals = ts_at(t->co_s, h->h_co_vals);
    g->g_cnt = ts_at(t->co_s, h->h_co_cnt);
    g->g_idx = ts_at(t->co_s, h->h_co_index);
    g->g_slot = ts_at(t->co_s, h->h_co_slots);
    if (t->co_veb.v_height != (int)g->g_lg + 1)
        veb_init(&t->co_veb, (int)g->g_lg + 1);
}

static unsigned char *co_val(const struct co_tree *t, const struct co_geo *g,
                             uint64_t slot)
{
    return g->g_vals + slot * t->co_vbytes;
}

/* The value of the element at position i of the segment starting at slot
 * base.  A segment keeps its keys sorted but its values where they were
 * put (g_slot says where), so an insert or delete shifts 8-byte keys and
 * 2-byte slot numbers, not values: the log records what changed, and
 * value bytes do not change (docs/trees.md). */
static unsigned char *co_pval(const struct co_tree *t, const struct co_geo *g,
                              uint64_t base, uint32_t i)
{
    return co_val(t, g, base + g->g_slot[base + i]);
}

/* A value slot of segment [base, base + n) that no element uses. */
static uint16_t co_free_slot(const struct co_geo *g, uint64_t base,
                             uint32_t n)
{
    uint64_t used = 0;
    for (uint32_t i = 0; i < n; i++)
        used |= (uint64_t)1 << g->g_slot[base + i];
    return (uint16_t)__builtin_ctzll(~used);
}

/* Lengths of the arrays of a geometry of capacity cap. */
static void co_lengths(uint64_t cap, uint64_t vbytes, uint64_t len[])
{
    uint64_t segs = cap / co_seg_slots(cap);
    len[0] = cap * 8;
    len[1] = cap * vbytes;
    len[2] = segs * 4;
    len[3] = (2 * segs - 1) * sizeof(struct co_node);
    len[4] = cap * 2;
}

void co_attach(struct co_tree *t, struct ts_store *s)
{
    t->co_s = s;
    t->co_vbytes = tf_header(s)->h_value_bytes;
    t->co_veb.v_height = 0;
}

/* Recompute index leaves for segments [a, b) and their ancestors,
 * writing only nodes that change. */
static void co_fix(struct co_tree *t, const struct co_geo *g, uint64_t a,
                   uint64_t b)
{
    const struct veb *v = &t->co_veb;
    for (uint64_t s = a; s < b; s++) {
        struct co_node *n = &g->g_idx[veb_pos(v, g->g_segs + s)];
        uint64_t ne = g->g_cnt[s] > 0;
        uint64_t mn = ne ? g->g_keys[s * g->g_seg_slots] : 0;
        if (n->cn_nonempty != ne || n->cn_min != mn) {
            n->cn_nonempty = ne;
            n->cn_min = mn;
        }
    }
    uint64_t lo = g->g_segs + a, hi = g->g_segs + b - 1;
    while (lo > 1) {
        lo >>= 1;
        hi >>= 1;
        for (uint64_t i = lo; i <= hi; i++) {
            const struct co_node *l = &g->g_idx[veb_pos(v, 2 * i)];
            const struct co_node *r = &g->g_idx[veb_pos(v, 2 * i + 1)];
            struct co_node *n = &g->g_idx[veb_pos(v, i)];
            uint64_t ne = l->cn_nonempty | r->cn_nonempty;
            uint64_t mn = l->cn_nonempty   ? l->cn_min
                          : r->cn_nonempty ? r->cn_min
                                           : 0;
            if (n->cn_nonempty != ne || n->cn_min != mn) {
                n->cn_nonempty = ne;
                n->cn_min = mn;
            }
        }
    }
}

/* The segment a search for key ends in. */
static uint64_t co_locate(struct co_tree *t, const struct co_geo *g,
                          uint64_t key)
{
    const struct veb *v = &t->co_veb;
    uint64_t pos[VEB_MAX_HEIGHT + 2], bfs = 1;
    pos[1] = 0;
    for (int d = 1; d <= (int)g->g_lg; d++) {
        uint64_t rc = 2 * bfs + 1, rp = veb_step(v, pos, rc, d + 1);
        const struct co_node *r = &g->g_idx[rp];
        if (r->cn_nonempty && r->cn_min <= key) {
            bfs = rc;
            pos[d + 1] = rp;
        } else {
            bfs = rc - 1;
            pos[d + 1] = veb_step(v, pos, bfs, d + 1);
        }
    }
    return bfs - g->g_segs;
}

static uint32_t co_lower(const uint64_t *keys, uint32_t n, uint64_t key)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A gathered run of elements in process memory. */
struct co_run {
    uint64_t r_n;
    uint64_t *r_keys;
    unsigned char *r_vals;
};

/* Gather segments [a, a+w) in order, with key/val (if val != NULL) put in
 * its place. */
static void co_gather(const struct co_tree *t, const struct co_geo *g,
                      uint64_t a, uint64_t w, uint64_t tot, uint64_t key,
                      const void *val, struct co_run *run)
{
    size_t vb = t->co_vbytes;
    int pending = val != NULL;
    run->r_keys = malloc(tot * sizeof *run->r_keys + 1);
    run->r_vals = malloc(tot * vb + 1);
    if (run->r_keys == NULL || run->r_vals == NULL)
        abort();
    run->r_n = 0;
    for (uint64_t s = a; s < a + w; s++) {
        uint64_t base = s * g->g_seg_slots;
        for (uint32_t i = 0; i < g->g_cnt[s]; i++) {
            uint64_t k = g->g_keys[base + i];
            if (pending && key < k) {
                run->r_keys[run->r_n] = key;
                memcpy(run->r_vals + run->r_n++ * vb, val, vb);
                pending = 0;
            }
            run->r_keys[run->r_n] = k;
            memcpy(run->r_vals + run->r_n++ * vb, co_pval(t, g, base, i), vb);
        }
    }
    if (pending) {
        run->r_keys[run->r_n] = key;
        memcpy(run->r_vals + run->r_n++ * vb, val, vb);
    }
}

/* Spread run evenly over segments [a, a+w) of g. */
static void co_spread(const struct co_tree *t, const struct co_geo *g,
                      uint64_t a, uint64_t w, const struct co_run *run)
{
    size_t vb = t->co_vbytes;
    uint64_t from = 0, n = run->r_n;
    for (uint64_t j = 0; j < w; j++) {
        uint64_t c = n * (j + 1) / w - n * j / w;
        uint64_t base = (a + j) * g->g_seg_slots;
        memcpy(&g->g_keys[base], &run->r_keys[from], c * 8);
        memcpy(co_val(t, g, base), run->r_vals + from * vb, c * vb);
        for (uint64_t k = 0; k < c; k++)
            g->g_slot[base + k] = (uint16_t)k;
        g->g_cnt[a + j] = (uint32_t)c;
        from += c;
    }
}

static void co_run_free(struct co_run *run)
{
    free(run->r_keys);
    free(run->r_vals);
}

/* Allocate a fresh array of capacity cap and make it the tree's, moving
 * every element (plus key/val if val != NULL) into it. */
static int co_resize(struct co_tree *t, uint64_t cap, uint64_t key,
                     const void *val)
{
    struct ts_store *s = t->co_s;
    struct tf_header *h = tf_header(s);
    struct co_geo old, g;
    uint32_t S = co_seg_slots(cap);
    uint64_t segs = cap / S;
    uint64_t len[CO_NARRAYS], off[CO_NARRAYS] = {0, 0, 0, 0, 0};

    co_lengths(cap, t->co_vbytes, len);
    for (int k = 0; k < CO_NARRAYS; k++) {
        off[k] = tf_alloc(s, len[k]);
        if (off[k] == 0) {
            while (k-- > 0)
                tf_free(s, off[k], len[k]);
            return TR_EFULL;
        }
    }
    co_geo(t, &old);
    uint64_t tot = val != NULL;
    for (uint64_t j = 0; j < old.g_segs; j++)
        tot += old.g_cnt[j];
    struct co_run run;
    co_gather(t, &old, 0, old.g_segs, tot, key, val, &run);
    uint64_t old_off[CO_NARRAYS] = {h->h_co_keys, h->h_co_vals, h->h_co_cnt,
                                    h->h_co_index, h->h_co_slots};
    uint64_t old_len[CO_NARRAYS];
    co_lengths(old.g_cap, t->co_vbytes, old_len);
    h->h_co_keys = off[0];
    h->h_co_vals = off[1];
    h->h_co_cnt = off[2];
    h->h_co_index = off[3];
    h->h_co_slots = off[4];
    h->h_co_capacity = cap;
    h->h_co_seg_slots = S;
    h->h_co_lg_segs = co_lg(segs);
    co_geo(t, &g);
    co_spread(t, &g, 0, g.g_segs, &run);
    co_run_free(&run);
    /* Fresh extents from the free list hold old data: rewrite the index. */
    memset(g.g_idx, 0xff, len[3]);
    co_fix(t, &g, 0, g.g_segs);
    for (int k = CO_NARRAYS - 1; k >= 0; k--)
        tf_free(s, old_off[k], old_len[k]);
    return 0;
}

int co_format(struct ts_store *s)
{
    struct tf_header *h = tf_header(s);
    struct co_tree t;
    uint64_t cap = CO_MIN_CAPACITY;
    uint32_t S = co_seg_slots(cap);
    uint64_t segs = cap / S;
    uint64_t len[CO_NARRAYS], off[CO_NARRAYS];

    co_lengths(cap, h->h_value_bytes, len);
    for (int k = 0; k < CO_NARRAYS; k++)
        if ((off[k] = tf_alloc(s, len[k])) == 0)
            return TR_EFULL;
    h->h_co_keys = off[0];
    h->h_co_vals = off[1];
    h->h_co_cnt = off[2];
    h->h_co_index = off[3];
    h->h_co_slots = off[4];
    h->h_co_capacity = cap;
    h->h_co_seg_slots = S;
    h->h_co_lg_segs = co_lg(segs);
    co_attach(&t, s);
    struct co_geo g;
    co_geo(&t, &g);
    memset(g.g_cnt, 0, len[2]);
    memset(g.g_idx, 0xff, len[3]);
    co_fix(&t, &g, 0, segs);
    return 0;
}

int co_search(struct co_tree *t, uint64_t key, void *val)
{
    struct co_geo g;
    co_geo(t, &g);
    uint64_t seg = co_locate(t, &g, key), base = seg * g.g_seg_slots;
    uint32_t n = g.g_cnt[seg], i = co_lower(&g.g_keys[base], n, key);
    if (i == n || g.g_keys[base + i] != key)
        return 0;
    if (val != NULL)
        memcpy(val, co_pval(t, &g, base, i), t->co_vbytes);
    return 1;
}

int co_insert(struct co_tree *t, uint64_t key, const void *val)
{
    struct co_geo g;
    co_geo(t, &g);
    size_t vb = t->co_vbytes;
    uint64_t seg = co_locate(t, &g, key), base = seg * g.g_seg_slots;
    uint32_t n = g.g_cnt[seg], i = co_lower(&g.g_keys[base], n, key);

    if (i < n && g.g_keys[base + i] == key) {
        memcpy(co_pval(t, &g, base, i), val, vb);
        return 1;
    }
    if (n < g.g_seg_slots) {
        uint16_t free_slot = co_free_slot(&g, base, n);
        memmove(&g.g_keys[base + i + 1], &g.g_keys[base + i], 8u * (n - i));
        memmove(&g.g_slot[base + i + 1], &g.g_slot[base + i], 2u * (n - i));
        g.g_keys[base + i] = key;
        g.g_slot[base + i] = free_slot;
        memcpy(co_val(t, &g, base + free_slot), val, vb);
        g.g_cnt[seg] = n + 1;
        if (i == 0)
            co_fix(t, &g, seg, seg + 1);
        return 0;
    }
    uint64_t H = g.g_lg;
    for (uint64_t h = 1; h <= H; h++) {
        uint64_t w = (uint64_t)1 << h, a = seg & ~(w - 1), tot = 1;
        for (uint64_t j = a; j < a + w; j++)
            tot += g.g_cnt[j];
        if (tot * 4 * H <= (4 * H - h) * w * g.g_seg_slots) {
            struct co_run run;
            co_gather(t, &g, a, w, tot, key, val, &run);
            co_spread(t, &g, a, w, &run);
            co_run_free(&run);
            co_fix(t, &g, a, a + w);
            return 0;
        }
    }
    return co_resize(t, 2 * g.g_cap, key, val);
}

int co_delete(struct co_tree *t, uint64_t key)
{
    struct co_geo g;
    co_geo(t, &g);
    uint64_t seg = co_locate(t, &g, key), base = seg * g.g_seg_slots;
    uint32_t n = g.g_cnt[seg], i = co_lower(&g.g_keys[base], n, key);

    if (i == n || g.g_keys[base + i] != key)
        return 0;
    memmove(&g.g_keys[base + i], &g.g_keys[base + i + 1], 8u * (n - i - 1));
    memmove(&g.g_slot[base + i], &g.g_slot[base + i + 1], 2u * (n - i - 1));
    g.g_cnt[seg] = n - 1;
    if (i == 0)
        co_fix(t, &g, seg, seg + 1);
    if (g.g_cap > CO_MIN_CAPACITY) {
        uint64_t tot = 0;
        for (uint64_t j = 0; j < g.g_segs; j++)
            tot += g.g_cnt[j];
        /* Halving needs room for the new extents; without it the array
         * just stays sparse. */
        if (tot < g.g_cap / 8)
            (void)co_resize(t, g.g_cap / 2, 0, NULL);
    }
    return 1;
}

long long co_range(struct co_tree *t, uint64_t lo, uint64_t hi,
                   co_visit_fn fn, void *arg)
{
    struct co_geo g;
    long long visited = 0;
    if (lo > hi)
        return 0;
    co_geo(t, &g);
    uint64_t seg = co_locate(t, &g, lo);
    for (int first = 1; seg < g.g_segs; seg++, first = 0) {
        uint64_t base = seg * g.g_seg_slots;
        uint32_t n = g.g_cnt[seg];
        uint32_t i = first ? co_lower(&g.g_keys[base], n, lo) : 0;
        for (; i < n; i++) {
            uint64_t k = g.g_keys[base + i];
            if (k > hi)
                return visited;
            visited++;
            if (fn != NULL && fn(arg, k, co_pval(t, &g, base, i)))
                return visited;
        }
    }
    return visited;
}

int co_check(struct co_tree *t, char *why, size_t len)
{
    const struct tf_header *h = tf_header(t->co_s);
    struct co_geo g;
    uint64_t tot = 0, prev = 0;
    int have_prev = 0;

    if (h->h_co_lg_segs > VEB_MAX_HEIGHT - 1 || h->h_co_seg_slots < 8 ||
        (h->h_co_seg_slots & (h->h_co_seg_slots - 1)) != 0 ||
        h->h_co_capacity !=
            ((uint64_t)h->h_co_seg_slots << h->h_co_lg_segs) ||
        h->h_co_capacity < CO_MIN_CAPACITY ||
        h->h_co_seg_slots != co_seg_slots(h->h_co_capacity)) {
        snprintf(why, len, "CO B-tree: inconsistent geometry (C %llu, S %u, "
                 "lg M %u)", (unsigned long long)h->h_co_capacity,
                 h->h_co_seg_slots, h->h_co_lg_segs);
        return -1;
    }
    co_geo(t, &g);
    uint64_t alen[CO_NARRAYS];
    const uint64_t offs[CO_NARRAYS] = {h->h_co_keys, h->h_co_vals,
                                       h->h_co_cnt, h->h_co_index,
                                       h->h_co_slots};
    co_lengths(g.g_cap, t->co_vbytes, alen);
    for (int k = 0; k < CO_NARRAYS; k++)
        if (offs[k] + alen[k] > h->h_file_bytes) {
            snprintf(why, len, "CO B-tree: array %d ends outside the file", k);
            return -1;
        }
    for (uint64_t s = 0; s < g.g_segs; s++) {
        uint32_t n = g.g_cnt[s];
        if (n > g.g_seg_slots) {
            snprintf(why, len, "CO B-tree: segment %llu holds %u > %u",
                     (unsigned long long)s, n, g.g_seg_slots);
            return -1;
        }
        uint64_t used = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint16_t sl = g.g_slot[s * g.g_seg_slots + i];
            if (sl >= g.g_seg_slots || (used >> sl & 1) != 0) {
                snprintf(why, len, "CO B-tree: segment %llu position %u has "
                         "value slot %u, out of range or used twice",
                         (unsigned long long)s, i, sl);
                return -1;
            }
            used |= (uint64_t)1 << sl;
        }
        for (uint32_t i = 0; i < n; i++) {
            uint64_t k = g.g_keys[s * g.g_seg_slots + i];
            if (have_prev && k <= prev) {
                snprintf(why, len, "CO B-tree: keys not ascending at segment "
                         "%llu slot %u", (unsigned long long)s, i);
                return -1;
            }
            prev = k;
            have_prev = 1;
        }
        tot += n;
    }
    if (tot > g.g_cap ||
        (g.g_cap > CO_MIN_CAPACITY && tot < g.g_cap / 8)) {
        snprintf(why, len, "CO B-tree: %llu elements in capacity %llu "
                 "break the density bounds [C/8, C]",
                 (unsigned long long)tot, (unsigned long long)g.g_cap);
        return -1;
    }
    const struct veb *v = &t->co_veb;
    for (uint64_t i = 2 * g.g_segs - 1; i >= 1; i--) {
        const struct co_node *n = &g.g_idx[veb_pos(v, i)];
        uint64_t ne, mn;
        if (i >= g.g_segs) {
            uint64_t s = i - g.g_segs;
            ne = g.g_cnt[s] > 0;
            mn = ne ? g.g_keys[s * g.g_seg_slots] : 0;
        } else {
            const struct co_node *l = &g.g_idx[veb_pos(v, 2 * i)];
            const struct co_node *r = &g.g_idx[veb_pos(v, 2 * i + 1)];
            ne = l->cn_nonempty | r->cn_nonempty;
            mn = l->cn_nonempty ? l->cn_min : r->cn_nonempty ? r->cn_min : 0;
        }
        if (n->cn_nonempty != ne || (ne && n->cn_min != mn)) {
            snprintf(why, len, "CO B-tree: vEB index node %llu (position "
                     "%llu) disagrees with %s", (unsigned long long)i,
                     (unsigned long long)veb_pos(v, i),
                     i >= g.g_segs ? "its segment" : "its children");
            return -1;
        }
    }
    return 0;
}
