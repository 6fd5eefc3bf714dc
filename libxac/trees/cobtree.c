/* cobtree.c: see cobtree.h. */
#include "cobtree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "terr.h"
#include "tfile.h"

/* The geometry of the current array, read from the header. */
struct co_geo {
    uint64_t g_cap, g_segs;
    uint32_t g_seg_slots, g_lg;
    unsigned char *g_recs; /* segment records (cobtree.h) */
    uint64_t g_recsz;
    struct co_node *g_idx;
};

/* The arrays of one geometry, in allocation order: the segment records,
 * the index. */
#define CO_NARRAYS 2


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
    g->g_recs = ts_at(t->co_s, h->h_co_recs);
    g->g_recsz = CO_REC_BYTES(g->g_seg_slots);
    g->g_idx = ts_at(t->co_s, h->h_co_index);
    if (t->co_veb.v_height != (int)g->g_lg + 1)
        veb_init(&t->co_veb, (int)g->g_lg + 1);
}

/* Lengths of the arrays of a geometry of capacity cap. */
static void co_lengths(uint64_t cap, uint64_t len[])
{
    uint32_t S = co_seg_slots(cap);
    uint64_t segs = cap / S;
    len[0] = segs * CO_REC_BYTES(S);
    len[1] = (2 * segs - 1) * sizeof(struct co_node);
}

/* Segment s's element count, keys and heap indexes. */
static uint32_t *co_cnt(const struct co_geo *g, uint64_t s)
{
    return (uint32_t *)(void *)(g->g_recs + s * g->g_recsz);
}

static uint64_t *co_keys(const struct co_geo *g, uint64_t s)
{
    return (uint64_t *)(void *)(g->g_recs + s * g->g_recsz + CO_REC_KEYS);
}

static uint32_t *co_vix(const struct co_geo *g, uint64_t s)
{
    return (uint32_t *)(void *)(g->g_recs + s * g->g_recsz +
                                CO_REC_VIX(g->g_seg_slots));
}

/* ---- the value heap --------------------------------------------------
 *
 * Values live in a heap apart from the packed memory array and never move
 * while their key is in the tree: a rebalance or a resize moves 8-byte
 * keys and 4-byte heap indexes, so the log records those, not values
 * (docs/trees.md).  The heap is split into lanes, one per process (modulo
 * TF_HEAP_LANES), each appended to at its own end.  In a lane, chunk k
 * holds CO_HEAP_BASE << k entries; an entry is the key that owns it (for
 * delete, the checker and finding the end) followed by the value, padded
 * to 8 bytes, so an insert writes one place.  A lane's entries [0, n) are
 * live; a delete moves the lane's last entry into the hole. */

_Static_assert(TF_HEAP_LANES <= 1u << (32 - CO_LANE_SHIFT), "lane bits");
_Static_assert((uint64_t)CO_HEAP_BASE * ((1ull << TF_HEAP_CHUNKS) - 1) <=
                   1ull << CO_LANE_SHIFT,
               "a lane's entries fit in a vix");

static uint64_t heap_entries(uint32_t k)
{
    return (uint64_t)CO_HEAP_BASE << k;
}

static uint64_t heap_entry_bytes(const struct co_tree *t)
{
    return 8 + ((uint64_t)t->co_vbytes + 7) / 8 * 8;
}

static uint64_t heap_chunk_bytes(const struct co_tree *t, uint32_t k)
{
    return heap_entries(k) * heap_entry_bytes(t);
}

/* First entry of chunk k. */
static uint64_t heap_first(uint32_t k)
{
    return CO_HEAP_BASE * (((uint64_t)1 << k) - 1);
}

/* Which chunk holds entry i, and where in it. */
static uint32_t heap_where(uint64_t i, uint64_t *j)
{
    uint32_t k = (uint32_t)(63 - __builtin_clzll(i / CO_HEAP_BASE + 1));
    *j = i - heap_first(k);
    return k;
}

static struct tf_heap_lane *heap_lane(const struct co_tree *t, uint32_t l)
{
    return ts_at(t->co_s, tf_header(t->co_s)->h_co_lanes + l * TF_PAGE);
}

/* The entry vix names: its key, then its value. */
static uint64_t *heap_key(const struct co_tree *t, uint32_t vix)
{
    uint64_t j;
    uint32_t k = heap_where(CO_VIX_ENTRY(vix), &j);
    uint64_t off = heap_lane(t, CO_VIX_LANE(vix))->l_chunk[k];
    unsigned char *c = ts_at(t->co_s, off);
    return (uint64_t *)(void *)(c + j * heap_entry_bytes(t));
}

static unsigned char *heap_val(const struct co_tree *t, uint32_t vix)
{
    return (unsigned char *)(heap_key(t, vix) + 1);
}

/* Make room for entry end of lane l.  TR_EFULL if the file is full. */
static int heap_reserve(struct co_tree *t, uint32_t l, uint64_t end)
{
    struct tf_heap_lane *ln = heap_lane(t, l);
    uint64_t j, off;
    uint32_t k = heap_where(end, &j);

    if (k >= TF_HEAP_CHUNKS)
        return TR_EFULL;
    if (k < ln->l_chunks)
        return 0;
    off = tf_alloc(t->co_s, heap_chunk_bytes(t, k));
    if (off == 0)
        return TR_EFULL;
    ln->l_chunk[k] = off;
    ln->l_chunks = k + 1;
    return 0;
}

static int co_find(struct co_tree *t, const struct co_geo *g, uint64_t key,
                   uint64_t *seg, uint32_t *i);

/* Is entry e of lane l live: does the key written in it own it?  Exact
 * for any e: a stale key left in a dead entry either is not in the tree
 * or owns another entry. */
static int heap_owned(struct co_tree *t, const struct co_geo *g, uint32_t l,
                      uint64_t e)
{
    if (e >= heap_first(heap_lane(t, l)->l_chunks))
        return 0;
    uint64_t seg;
    uint32_t i;
    return co_find(t, g, *heap_key(t, CO_VIX(l, e)), &seg, &i) &&
           co_vix(g, seg)[i] == CO_VIX(l, e);
}

/* Lane l's end n (its entries [0, n) are live): this process's last end if
 * it still holds, else a binary search of [hint, hint + window] (live
 * entries come first, so "not live" is monotone). */
static uint64_t heap_end(struct co_tree *t, const struct co_geo *g,
                         uint32_t l)
{
    uint64_t lo = heap_lane(t, l)->l_hint;
    uint64_t hi = lo + CO_HEAP_WINDOW, c = t->co_end[l];

    if (c >= lo && c <= hi && (c == 0 || heap_owned(t, g, l, c - 1)) &&
        !heap_owned(t, g, l, c))
        return c;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (heap_owned(t, g, l, mid))
            lo = mid + 1;
        else
            hi = mid;
    }
    t->co_end[l] = lo;
    return lo;
}

/* The number of elements: the sum of the lanes' ends. */
static uint64_t heap_total(struct co_tree *t, const struct co_geo *g)
{
    uint64_t n = 0;
    for (uint32_t l = 0; l < TF_HEAP_LANES; l++)
        n += heap_end(t, g, l);
    return n;
}

/* The entry vix names lost its key, and end was its lane's end: move the
 * lane's last entry into the hole and repoint its key, keep the hint at or
 * below the new end, then give back a trailing chunk that is no longer
 * needed (only once the chunk before it is under half full, so that a
 * boundary does not allocate and free in turn). */
static void heap_drop(struct co_tree *t, const struct co_geo *g,
                      uint32_t vix, uint64_t end)
{
    uint32_t l = CO_VIX_LANE(vix), k;
    struct tf_heap_lane *ln = heap_lane(t, l);
    uint64_t last = end - 1;

    if (CO_VIX_ENTRY(vix) != last) {
        uint64_t key = *heap_key(t, CO_VIX(l, last)), seg;
        uint32_t p;
        (void)co_find(t, g, key, &seg, &p); /* a live entry's key is there */
        *heap_key(t, vix) = key;
        memcpy(heap_val(t, vix), heap_val(t, CO_VIX(l, last)), t->co_vbytes);
        co_vix(g, seg)[p] = vix;
    }
    if (ln->l_hint > last)
        ln->l_hint = last;
    t->co_end[l] = last;
    k = ln->l_chunks;
    if (k >= 2 && last < heap_first(k - 2) + heap_entries(k - 2) / 2) {
        tf_free(t->co_s, ln->l_chunk[k - 1], heap_chunk_bytes(t, k - 1));
        ln->l_chunk[k - 1] = 0;
        ln->l_chunks = k - 1;
    }
}

void co_attach(struct co_tree *t, struct ts_store *s)
{
    t->co_s = s;
    t->co_vbytes = tf_header(s)->h_value_bytes;
    t->co_veb.v_height = 0;
    t->co_lane = (uint32_t)getpid() % TF_HEAP_LANES;
    memset(t->co_end, 0, sizeof t->co_end);
}

/* Recompute index leaves for segments [a, b) and their ancestors,
 * writing only nodes that change. */
static void co_fix(struct co_tree *t, const struct co_geo *g, uint64_t a,
                   uint64_t b)
{
    const struct veb *v = &t->co_veb;
    for (uint64_t s = a; s < b; s++) {
        struct co_node *n = &g->g_idx[veb_pos(v, g->g_segs + s)];
        uint64_t ne = *co_cnt(g, s) > 0;
        uint64_t mn = ne ? co_keys(g, s)[0] : 0;
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

/* Where key is, or would go: its segment *seg and position *i in it.
 * Returns 1 if the key is there. */
static int co_find(struct co_tree *t, const struct co_geo *g, uint64_t key,
                   uint64_t *seg, uint32_t *i)
{
    *seg = co_locate(t, g, key);
    const uint64_t *keys = co_keys(g, *seg);
    uint32_t n = *co_cnt(g, *seg);
    *i = co_lower(keys, n, key);
    return *i < n && keys[*i] == key;
}

/* A gathered run of elements in process memory: keys and heap indexes. */
struct co_run {
    uint64_t r_n;
    uint64_t *r_keys;
    uint32_t *r_vix;
};

/* Gather segments [a, a+w) in order, with the new element (key, ix) put
 * in its place if has_new. */
static void co_gather(const struct co_geo *g, uint64_t a, uint64_t w,
                      uint64_t tot, uint64_t key, uint32_t ix, int has_new,
                      struct co_run *run)
{
    run->r_keys = malloc(tot * sizeof *run->r_keys + 1);
    run->r_vix = malloc(tot * sizeof *run->r_vix + 1);
    if (run->r_keys == NULL || run->r_vix == NULL)
        abort();
    run->r_n = 0;
    for (uint64_t s = a; s < a + w; s++) {
        const uint64_t *keys = co_keys(g, s);
        const uint32_t *vix = co_vix(g, s);
        for (uint32_t i = 0; i < *co_cnt(g, s); i++) {
            uint64_t k = keys[i];
            if (has_new && key < k) {
                run->r_keys[run->r_n] = key;
                run->r_vix[run->r_n++] = ix;
                has_new = 0;
            }
            run->r_keys[run->r_n] = k;
            run->r_vix[run->r_n++] = vix[i];
        }
    }
    if (has_new) {
        run->r_keys[run->r_n] = key;
        run->r_vix[run->r_n++] = ix;
    }
}

/* Spread run evenly over segments [a, a+w) of g. */
static void co_spread(const struct co_geo *g, uint64_t a, uint64_t w,
                      const struct co_run *run)
{
    uint64_t from = 0, n = run->r_n;
    for (uint64_t j = 0; j < w; j++) {
        uint64_t c = n * (j + 1) / w - n * j / w;
        memcpy(co_keys(g, a + j), &run->r_keys[from], c * 8);
        memcpy(co_vix(g, a + j), &run->r_vix[from], c * 4);
        *co_cnt(g, a + j) = (uint32_t)c;
        from += c;
    }
}

static void co_run_free(struct co_run *run)
{
    free(run->r_keys);
    free(run->r_vix);
}

/* Allocate a fresh array of capacity cap and make it the tree's, moving
 * every element (plus (key, ix) if has_new) into it.  Values stay in the
 * heap. */
static int co_resize(struct co_tree *t, uint64_t cap, uint64_t key,
                     uint32_t ix, int has_new)
{
    struct ts_store *s = t->co_s;
    struct tf_header *h = tf_header(s);
    struct co_geo old, g;
    uint32_t S = co_seg_slots(cap);
    uint64_t segs = cap / S;
    uint64_t len[CO_NARRAYS], off[CO_NARRAYS] = {0, 0};

    co_lengths(cap, len);
    for (int k = 0; k < CO_NARRAYS; k++) {
        off[k] = tf_alloc(s, len[k]);
        if (off[k] == 0) {
            while (k-- > 0)
                tf_free(s, off[k], len[k]);
            return TR_EFULL;
        }
    }
    co_geo(t, &old);
    uint64_t tot = has_new != 0;
    for (uint64_t j = 0; j < old.g_segs; j++)
        tot += *co_cnt(&old, j);
    struct co_run run;
    co_gather(&old, 0, old.g_segs, tot, key, ix, has_new, &run);
    uint64_t old_off[CO_NARRAYS] = {h->h_co_recs, h->h_co_index};
    uint64_t old_len[CO_NARRAYS];
    co_lengths(old.g_cap, old_len);
    h->h_co_recs = off[0];
    h->h_co_index = off[1];
    h->h_co_capacity = cap;
    h->h_co_seg_slots = S;
    h->h_co_lg_segs = co_lg(segs);
    co_geo(t, &g);
    co_spread(&g, 0, g.g_segs, &run);
    co_run_free(&run);
    /* Fresh extents from the free list hold old data: rewrite the index. */
    memset(g.g_idx, 0xff, len[1]);
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

    co_lengths(cap, len);
    for (int k = 0; k < CO_NARRAYS; k++)
        if ((off[k] = tf_alloc(s, len[k])) == 0)
            return TR_EFULL;
    if ((h->h_co_lanes = tf_alloc(s, TF_HEAP_LANES * TF_PAGE)) == 0)
        return TR_EFULL;
    h->h_co_recs = off[0];
    h->h_co_index = off[1];
    h->h_co_capacity = cap;
    h->h_co_seg_slots = S;
    h->h_co_lg_segs = co_lg(segs);
    co_attach(&t, s);
    for (uint32_t l = 0; l < TF_HEAP_LANES; l++)
        memset(heap_lane(&t, l), 0, sizeof(struct tf_heap_lane));
    struct co_geo g;
    co_geo(&t, &g);
    for (uint64_t j = 0; j < segs; j++)
        *co_cnt(&g, j) = 0;
    memset(g.g_idx, 0xff, len[1]);
    co_fix(&t, &g, 0, segs);
    return 0;
}

int co_search(struct co_tree *t, uint64_t key, void *val)
{
    struct co_geo g;
    co_geo(t, &g);
    uint64_t seg;
    uint32_t i;
    if (!co_find(t, &g, key, &seg, &i))
        return 0;
    if (val != NULL)
        memcpy(val, heap_val(t, co_vix(&g, seg)[i]), t->co_vbytes);
    return 1;
}

/* Put (key, ix) into the array: into its segment if it has a gap, else
 * rebalance the smallest enclosing window that is not too dense, else
 * double the array. */
static int co_place(struct co_tree *t, const struct co_geo *g, uint64_t seg,
                    uint32_t i, uint64_t key, uint32_t ix)
{
    uint64_t *keys = co_keys(g, seg);
    uint32_t *vix = co_vix(g, seg), n = *co_cnt(g, seg);

    if (n < g->g_seg_slots) {
        memmove(&keys[i + 1], &keys[i], 8u * (n - i));
        memmove(&vix[i + 1], &vix[i], 4u * (n - i));
        keys[i] = key;
        vix[i] = ix;
        *co_cnt(g, seg) = n + 1;
        if (i == 0)
            co_fix(t, g, seg, seg + 1);
        return 0;
    }
    uint64_t H = g->g_lg;
    for (uint64_t h = 1; h <= H; h++) {
        uint64_t w = (uint64_t)1 << h, a = seg & ~(w - 1), tot = 1;
        for (uint64_t j = a; j < a + w; j++)
            tot += *co_cnt(g, j);
        if (tot * 4 * H <= (4 * H - h) * w * g->g_seg_slots) {
            struct co_run run;
            co_gather(g, a, w, tot, key, ix, 1, &run);
            co_spread(g, a, w, &run);
            co_run_free(&run);
            co_fix(t, g, a, a + w);
            return 0;
        }
    }
    return co_resize(t, 2 * g->g_cap, key, ix, 1);
}

int co_insert(struct co_tree *t, uint64_t key, const void *val)
{
    struct co_geo g;
    co_geo(t, &g);
    uint64_t seg;
    uint32_t i, ix;
    int rc;

    if (co_find(t, &g, key, &seg, &i)) {
        memcpy(heap_val(t, co_vix(&g, seg)[i]), val, t->co_vbytes);
        return 1;
    }
    uint32_t l = t->co_lane;
    uint64_t end = heap_end(t, &g, l);
    if ((rc = heap_reserve(t, l, end)) != 0)
        return rc;
    /* The entry is written first and becomes live when its key owns it:
     * if the array cannot grow, nothing refers to it and the tree is
     * unchanged. */
    ix = CO_VIX(l, end);
    *heap_key(t, ix) = key;
    memcpy(heap_val(t, ix), val, t->co_vbytes);
    if ((rc = co_place(t, &g, seg, i, key, ix)) != 0)
        return rc;
    t->co_end[l] = end + 1;
    if (end + 1 > heap_lane(t, l)->l_hint + CO_HEAP_WINDOW)
        heap_lane(t, l)->l_hint = end + 1;
    return 0;
}

int co_delete(struct co_tree *t, uint64_t key)
{
    struct co_geo g;
    co_geo(t, &g);
    uint64_t seg, end;
    uint32_t i, ix;

    if (!co_find(t, &g, key, &seg, &i))
        return 0;
    uint64_t *keys = co_keys(&g, seg);
    uint32_t *vix = co_vix(&g, seg), n = *co_cnt(&g, seg);
    ix = vix[i];
    end = heap_end(t, &g, CO_VIX_LANE(ix)); /* while entry ix is live */
    memmove(&keys[i], &keys[i + 1], 8u * (n - i - 1));
    memmove(&vix[i], &vix[i + 1], 4u * (n - i - 1));
    *co_cnt(&g, seg) = n - 1;
    if (i == 0)
        co_fix(t, &g, seg, seg + 1);
    heap_drop(t, &g, ix, end);
    /* Halving needs room for the new extents; without it the array just
     * stays sparse. */
    if (g.g_cap > CO_MIN_CAPACITY && heap_total(t, &g) < g.g_cap / 8)
        (void)co_resize(t, g.g_cap / 2, 0, 0, 0);
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
        const uint64_t *keys = co_keys(&g, seg);
        const uint32_t *vix = co_vix(&g, seg);
        uint32_t n = *co_cnt(&g, seg);
        uint32_t i = first ? co_lower(keys, n, lo) : 0;
        for (; i < n; i++) {
            uint64_t k = keys[i];
            if (k > hi)
                return visited;
            visited++;
            if (fn != NULL && fn(arg, k, heap_val(t, vix[i])))
                return visited;
        }
    }
    return visited;
}

/* Is lane l's bookkeeping inconsistent with the file and with the n
 * elements that name it?  (Which key owns which entry: heap_owners_bad.) */
static int lane_bad(const struct co_tree *t, uint32_t l, uint64_t n,
                    char *why, size_t len)
{
    const struct tf_heap_lane *ln = heap_lane(t, l);
    uint32_t k, nk = ln->l_chunks;

    if (nk > TF_HEAP_CHUNKS || n > heap_first(nk)) {
        snprintf(why, len, "CO B-tree: heap lane %u has %u chunks for %llu "
                 "elements", l, nk, (unsigned long long)n);
        return -1;
    }
    if (n < ln->l_hint || n > ln->l_hint + CO_HEAP_WINDOW) {
        snprintf(why, len, "CO B-tree: heap lane %u holds %llu elements, "
                 "outside its hint's window [%llu, +%u]", l,
                 (unsigned long long)n, (unsigned long long)ln->l_hint,
                 CO_HEAP_WINDOW);
        return -1;
    }
    for (k = 0; k < nk; k++)
        if (ln->l_chunk[k] < TF_DATA ||
            ln->l_chunk[k] + heap_chunk_bytes(t, k) >
                tf_header(t->co_s)->h_file_bytes) {
            snprintf(why, len, "CO B-tree: heap lane %u chunk %u lies "
                     "outside the file", l, k);
            return -1;
        }
    return 0;
}

/* Does every lane's bookkeeping hold, and does each element own exactly
 * one live entry of its lane, whose key is the element's? */
static int heap_bad(const struct co_tree *t, const struct co_geo *g,
                    char *why, size_t len)
{
    uint64_t n[TF_HEAP_LANES] = {0};
    unsigned char *seen[TF_HEAP_LANES] = {NULL};
    const char *bad = NULL;
    uint32_t l;

    for (uint64_t s = 0; s < g->g_segs; s++)
        for (uint32_t i = 0; i < *co_cnt(g, s); i++)
            if (CO_VIX_LANE(co_vix(g, s)[i]) < TF_HEAP_LANES)
                n[CO_VIX_LANE(co_vix(g, s)[i])]++;
    for (l = 0; l < TF_HEAP_LANES; l++)
        if (lane_bad(t, l, n[l], why, len) != 0)
            return -1;
    for (l = 0; l < TF_HEAP_LANES; l++)
        if ((seen[l] = calloc(n[l] / 8 + 1, 1)) == NULL)
            abort();
    for (uint64_t s = 0; s < g->g_segs && bad == NULL; s++)
        for (uint32_t i = 0; i < *co_cnt(g, s) && bad == NULL; i++) {
            uint64_t k = co_keys(g, s)[i];
            uint32_t ix = co_vix(g, s)[i], e = CO_VIX_ENTRY(ix);
            l = CO_VIX_LANE(ix);
            bad = l >= TF_HEAP_LANES || e >= n[l]
                      ? "heap index past its lane's live entries"
                  : (seen[l][e / 8] >> (e % 8) & 1) != 0
                      ? "heap entry used twice"
                  : *heap_key(t, ix) != k ? "heap entry belongs to another key"
                                          : NULL;
            if (bad == NULL)
                seen[l][e / 8] |= (unsigned char)(1u << (e % 8));
            else
                snprintf(why, len, "CO B-tree: %s at segment %llu slot %u "
                         "(heap index %#x)", bad, (unsigned long long)s, i,
                         ix);
        }
    for (l = 0; l < TF_HEAP_LANES; l++)
        free(seen[l]);
    return bad != NULL ? -1 : 0;
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
    const uint64_t offs[CO_NARRAYS] = {h->h_co_recs, h->h_co_index};
    co_lengths(g.g_cap, alen);
    for (int k = 0; k < CO_NARRAYS; k++)
        if (offs[k] + alen[k] > h->h_file_bytes) {
            snprintf(why, len, "CO B-tree: array %d ends outside the file", k);
            return -1;
        }
    for (uint64_t s = 0; s < g.g_segs; s++) {
        uint32_t n = *co_cnt(&g, s);
        if (n > g.g_seg_slots) {
            snprintf(why, len, "CO B-tree: segment %llu holds %u > %u",
                     (unsigned long long)s, n, g.g_seg_slots);
            return -1;
        }
        for (uint32_t i = 0; i < n; i++) {
            uint64_t k = co_keys(&g, s)[i];
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
            ne = *co_cnt(&g, s) > 0;
            mn = ne ? co_keys(&g, s)[0] : 0;
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
    return heap_bad(t, &g, why, len);
}

int co_page_kind(struct co_tree *t, uint64_t off)
{
    const struct tf_header *h = tf_header(t->co_s);
    uint64_t segs = (uint64_t)1 << h->h_co_lg_segs;

    if (off >= h->h_co_recs &&
        off < h->h_co_recs + segs * CO_REC_BYTES(h->h_co_seg_slots))
        return 2;
    if (off >= h->h_co_index &&
        off < h->h_co_index + (2 * segs - 1) * sizeof(struct co_node))
        return 3;
    if (off >= h->h_co_lanes && off < h->h_co_lanes + TF_HEAP_LANES * TF_PAGE)
        return 4;
    for (uint32_t l = 0; l < TF_HEAP_LANES; l++) {
        const struct tf_heap_lane *ln = heap_lane(t, l);
        for (uint32_t k = 0; k < ln->l_chunks; k++)
            if (off >= ln->l_chunk[k] &&
                off < ln->l_chunk[k] + heap_chunk_bytes(t, k))
                return 1;
    }
    return 0;
}
