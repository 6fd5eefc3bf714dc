/* btree.c: see btree.h. */
#include "btree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terr.h"
#include "tfile.h"

#define BT_HDR 16u
#define BT_MAXH 40

struct bt_node {
    uint32_t n_leaf;
    uint32_t n_n;
    uint64_t n_next;
};

/* A leaf: header, keys[cap] (sorted), slot[cap] (uint16: the value slot of
 * the key at each position, padded to 8 bytes), vals[cap] (unsorted).  An
 * insert shifts only keys and slot numbers, and writes its value into the
 * next free slot, so a transaction changes about key + value bytes instead
 * of half the leaf: diff logging (docs/libxac-durability.md) then writes
 * that much, not the shifted values.  A leaf with n keys uses slots
 * 0 .. n-1 exactly. */
uint32_t bt_cap_leaf(uint32_t block, uint32_t vbytes)
{
    uint32_t c = (block - BT_HDR - 8u) / (8u + 2u + vbytes);
    if (c > 65535u)
        c = 65535u;
    return c >= 2 ? c : 0;
}

uint32_t bt_cap_int(uint32_t block)
{
    return (block - BT_HDR - 8u) / 16u;
}

void bt_attach(struct bt_tree *t, struct ts_store *s)
{
    const struct tf_header *h = tf_header(s);
    t->bt_s = s;
    t->bt_block = h->h_block_bytes;
    t->bt_vbytes = h->h_value_bytes;
    t->bt_cap_leaf = bt_cap_leaf(t->bt_block, t->bt_vbytes);
    t->bt_cap_int = bt_cap_int(t->bt_block);
}

static struct bt_node *bt_node(const struct bt_tree *t, uint64_t off)
{
    return ts_at(t->bt_s, off);
}

static uint64_t *bt_keys(struct bt_node *n)
{
    return (uint64_t *)((char *)n + BT_HDR);
}

static uint16_t *bt_slots(const struct bt_tree *t, struct bt_node *n)
{
    return (uint16_t *)((char *)n + BT_HDR + 8u * t->bt_cap_leaf);
}

static unsigned char *bt_vals(const struct bt_tree *t, struct bt_node *n)
{
    size_t slots = (2u * (size_t)t->bt_cap_leaf + 7u) & ~(size_t)7u;
    return (unsigned char *)n + BT_HDR + 8u * t->bt_cap_leaf + slots;
}

static uint64_t *bt_kids(const struct bt_tree *t, struct bt_node *n)
{
    return (uint64_t *)((char *)n + BT_HDR + 8u * t->bt_cap_int);
}

/* Value slot s of leaf n. */
static unsigned char *bt_vslot(const struct bt_tree *t, struct bt_node *n,
                               uint32_t s)
{
    return bt_vals(t, n) + (size_t)s * t->bt_vbytes;
}

/* The value of the key at position i of leaf n. */
static unsigned char *bt_val(const struct bt_tree *t, struct bt_node *n,
                             uint32_t i)
{
    return bt_vslot(t, n, bt_slots(t, n)[i]);
}

/* First i with keys[i] >= key. */
static uint32_t bt_lower(const uint64_t *keys, uint32_t n, uint64_t key)
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

/* First i with keys[i] > key: the child to follow. */
static uint32_t bt_upper(const uint64_t *keys, uint32_t n, uint64_t key)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (keys[mid] <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static uint64_t bt_new_node(struct bt_tree *t, int leaf)
{
    uint64_t off = tf_alloc(t->bt_s, t->bt_block);
    if (off != 0) {
        struct bt_node *n = bt_node(t, off);
        /* Advisory stores: every new node is declared here, once. */
        ts_touch(t->bt_s, n, t->bt_block, READ_WRITE);
        n->n_leaf = (uint32_t)leaf;
        n->n_n = 0;
        n->n_next = 0;
    }
    return off;
}

int bt_format(struct ts_store *s)
{
    struct bt_tree t;
    bt_attach(&t, s);
    uint64_t root = bt_new_node(&t, 1);
    if (root == 0)
        return TR_EFULL;
    tf_header(s)->h_bt_root = root;
    tf_header(s)->h_bt_height = 1;
    return 0;
}

/* Descend to the leaf for key; path[0..height-1) get the internal nodes and
 * slot[] the child index taken in each.  Returns the leaf's offset. */
static uint64_t bt_descend(struct bt_tree *t, uint64_t key, uint64_t *path,
                           uint32_t *slot, int write)
{
    struct ts_store *s = t->bt_s;
    const struct tf_header *h = tf_header(s);
    uint64_t off = h->h_bt_root;
    uint32_t height = h->h_bt_height;

    for (uint32_t lvl = 0; lvl + 1 < height; lvl++) {
        struct bt_node *n = bt_node(t, off);
        ts_touch(s, n, BT_HDR, READ);
        uint64_t *keys = bt_keys(n);
        uint32_t j = bt_upper(keys, n->n_n, key);
        uint64_t *kid = &bt_kids(t, n)[j];
        ts_touch(s, kid, sizeof *kid, READ);
        if (path != NULL) {
            path[lvl] = off;
            slot[lvl] = j;
        }
        off = *kid;
    }
    ts_touch(s, bt_node(t, off), BT_HDR, write ? READ_WRITE : READ);
    return off;
}

int bt_search(struct bt_tree *t, uint64_t key, void *val)
{
    struct bt_node *leaf = bt_node(t, bt_descend(t, key, NULL, NULL, 0));
    uint64_t *keys = bt_keys(leaf);
    uint32_t i = bt_lower(keys, leaf->n_n, key);
    if (i == leaf->n_n || keys[i] != key)
        return 0;
    if (val != NULL)
        memcpy(val, bt_val(t, leaf, i), t->bt_vbytes);
    return 1;
}

/* Put key/val at position i of leaf n (which has room): shift the keys
 * and slot numbers from i, and put the value into free slot cnt. */
static void bt_leaf_put(struct bt_tree *t, struct bt_node *n, uint32_t i,
                        uint64_t key, const void *val)
{
    struct ts_store *s = t->bt_s;
    uint64_t *keys = bt_keys(n);
    uint16_t *slots = bt_slots(t, n);
    uint32_t cnt = n->n_n;
    size_t vb = t->bt_vbytes;

    ts_touch(s, n, sizeof *n, READ_WRITE);
    ts_touch(s, &keys[i], 8u * (cnt - i + 1), READ_WRITE);
    ts_touch(s, &slots[i], 2u * (cnt - i + 1), READ_WRITE);
    ts_touch(s, bt_vslot(t, n, cnt), vb, READ_WRITE);
    memmove(&keys[i + 1], &keys[i], 8u * (cnt - i));
    memmove(&slots[i + 1], &slots[i], 2u * (cnt - i));
    keys[i] = key;
    slots[i] = (uint16_t)cnt;
    memcpy(bt_vslot(t, n, cnt), val, vb);
    n->n_n = cnt + 1;
}

/* After a split left positions 0 .. keep-1 in leaf n: move the values whose
 * slots are keep or above into the free slots below keep. */
static void bt_leaf_compact(struct bt_tree *t, struct bt_node *n,
                            uint32_t keep)
{
    uint16_t *slots = bt_slots(t, n);
    unsigned char *used = calloc(keep ? keep : 1, 1);
    uint32_t p, f = 0;

    if (used == NULL)
        abort();
    for (p = 0; p < keep; p++)
        if (slots[p] < keep)
            used[slots[p]] = 1;
    for (p = 0; p < keep; p++) {
        if (slots[p] < keep)
            continue;
        while (used[f])
            f++;
        memcpy(bt_vslot(t, n, f), bt_vslot(t, n, slots[p]), t->bt_vbytes);
        slots[p] = (uint16_t)f;
        used[f] = 1;
    }
    free(used);
}

/* Insert separator key and right child r after slot j of internal node n
 * (which has room). */
static void bt_int_put(struct bt_tree *t, struct bt_node *n, uint32_t j,
                       uint64_t key, uint64_t r)
{
    uint64_t *keys = bt_keys(n), *kids = bt_kids(t, n);
    uint32_t cnt = n->n_n;
    memmove(&keys[j + 1], &keys[j], 8u * (cnt - j));
    memmove(&kids[j + 2], &kids[j + 1], 8u * (cnt - j));
    keys[j] = key;
    kids[j + 1] = r;
    n->n_n = cnt + 1;
}

int bt_insert(struct bt_tree *t, uint64_t key, const void *val)
{
    struct ts_store *s = t->bt_s;
    struct tf_header *h = tf_header(s);
    uint64_t path[BT_MAXH];
    uint32_t slot[BT_MAXH];
    uint32_t height = h->h_bt_height;
    uint64_t loff = bt_descend(t, key, path, slot, 1);
    struct bt_node *leaf = bt_node(t, loff);
    uint64_t *keys = bt_keys(leaf);
    uint32_t i = bt_lower(keys, leaf->n_n, key);

    if (i < leaf->n_n && keys[i] == key) {
        ts_touch(s, bt_val(t, leaf, i), t->bt_vbytes, READ_WRITE);
        memcpy(bt_val(t, leaf, i), val, t->bt_vbytes);
        return 1;
    }
    if (leaf->n_n < t->bt_cap_leaf) {
        bt_leaf_put(t, leaf, i, key, val);
        return 0;
    }
    /* Splits may cascade to a new root: make sure the blocks exist before
     * changing anything, so a full file leaves the tree intact. */
    if (height + 1 >= BT_MAXH || !tf_can_alloc(s, t->bt_block, height + 1))
        return TR_EFULL;

    uint64_t roff = bt_new_node(t, 1);
    struct bt_node *right = bt_node(t, roff);
    uint32_t keep = t->bt_cap_leaf / 2, move = leaf->n_n - keep;
    ts_touch(s, leaf, t->bt_block, READ_WRITE);
    memcpy(bt_keys(right), &keys[keep], 8u * move);
    for (uint32_t j = 0; j < move; j++) {
        bt_slots(t, right)[j] = (uint16_t)j;
        memcpy(bt_vslot(t, right, j), bt_val(t, leaf, keep + j),
               t->bt_vbytes);
    }
    right->n_n = move;
    bt_leaf_compact(t, leaf, keep);
    leaf->n_n = keep;
    right->n_next = leaf->n_next;
    leaf->n_next = roff;
    if (i <= keep)
        bt_leaf_put(t, leaf, i, key, val);
    else
        bt_leaf_put(t, right, i - keep, key, val);
    uint64_t sep = bt_keys(right)[0];

    /* Insert (sep, roff) into the parents, splitting full ones. */
    for (int lvl = (int)height - 2; lvl >= 0; lvl--) {
        struct bt_node *p = bt_node(t, path[lvl]);
        uint32_t j = slot[lvl];
        ts_touch(s, p, t->bt_block, READ_WRITE);
        if (p->n_n < t->bt_cap_int) {
            bt_int_put(t, p, j, sep, roff);
            return 0;
        }
        uint32_t cap = t->bt_cap_int, tot = cap + 1;
        uint64_t *tk = malloc(8u * (size_t)tot), *tc = malloc(8u * (tot + 1));
        if (tk == NULL || tc == NULL)
            abort();
        uint64_t *pk = bt_keys(p), *pc = bt_kids(t, p);
        memcpy(tk, pk, 8u * j);
        tk[j] = sep;
        memcpy(&tk[j + 1], &pk[j], 8u * (cap - j));
        memcpy(tc, pc, 8u * (j + 1));
        tc[j + 1] = roff;
        memcpy(&tc[j + 2], &pc[j + 1], 8u * (cap - j));
        uint32_t m = tot / 2;
        uint64_t noff = bt_new_node(t, 0);
        struct bt_node *np = bt_node(t, noff);
        memcpy(pk, tk, 8u * m);
        memcpy(pc, tc, 8u * (m + 1));
        p->n_n = m;
        memcpy(bt_keys(np), &tk[m + 1], 8u * (tot - m - 1));
        memcpy(bt_kids(t, np), &tc[m + 1], 8u * (tot - m));
        np->n_n = tot - m - 1;
        sep = tk[m];
        roff = noff;
        free(tk);
        free(tc);
    }
    /* The root split: a new root with one key. */
    uint64_t nroot = bt_new_node(t, 0);
    struct bt_node *r = bt_node(t, nroot);
    bt_keys(r)[0] = sep;
    bt_kids(t, r)[0] = height == 1 ? loff : path[0];
    bt_kids(t, r)[1] = roff;
    r->n_n = 1;
    h->h_bt_root = nroot;
    h->h_bt_height = height + 1;
    return 0;
}

int bt_delete(struct bt_tree *t, uint64_t key)
{
    struct ts_store *s = t->bt_s;
    struct bt_node *leaf = bt_node(t, bt_descend(t, key, NULL, NULL, 1));
    uint64_t *keys = bt_keys(leaf);
    uint32_t cnt = leaf->n_n, i = bt_lower(keys, cnt, key);
    size_t vb = t->bt_vbytes;

    if (i == cnt || keys[i] != key)
        return 0;
    uint16_t *slots = bt_slots(t, leaf);
    uint32_t freed = slots[i], last = cnt - 1;
    ts_touch(s, leaf, sizeof *leaf, READ_WRITE);
    ts_touch(s, &keys[i], 8u * (cnt - i), READ_WRITE);
    ts_touch(s, slots, 2u * cnt, READ_WRITE);
    if (freed != last) {
        /* Keep slots 0 .. cnt-2 in use: the value in the last slot moves
         * into the freed one. */
        uint32_t q = 0;
        while (slots[q] != last)
            q++;
        ts_touch(s, bt_vslot(t, leaf, freed), vb, READ_WRITE);
        memcpy(bt_vslot(t, leaf, freed), bt_vslot(t, leaf, last), vb);
        slots[q] = (uint16_t)freed;
    }
    memmove(&keys[i], &keys[i + 1], 8u * (cnt - i - 1));
    memmove(&slots[i], &slots[i + 1], 2u * (cnt - i - 1));
    leaf->n_n = cnt - 1;
    if (!tf_header(s)->h_deleted)
        tf_header(s)->h_deleted = 1;
    return 1;
}

long long bt_range(struct bt_tree *t, uint64_t lo, uint64_t hi,
                   bt_visit_fn fn, void *arg)
{
    uint64_t off = bt_descend(t, lo, NULL, NULL, 0);
    long long visited = 0;
    if (lo > hi)
        return 0;
    for (int first = 1; off != 0; first = 0) {
        struct bt_node *n = bt_node(t, off);
        uint64_t *keys = bt_keys(n);
        uint32_t i = first ? bt_lower(keys, n->n_n, lo) : 0;
        for (; i < n->n_n; i++) {
            if (keys[i] > hi)
                return visited;
            visited++;
            if (fn != NULL && fn(arg, keys[i], bt_val(t, n, i)))
                return visited;
        }
        off = n->n_next;
    }
    return visited;
}

static void bt_walk_node(struct bt_tree *t, uint64_t off, uint32_t depth,
                         uint32_t height, bt_node_fn fn, void *arg)
{
    fn(arg, off, depth);
    if (depth >= height)
        return;
    struct bt_node *n = bt_node(t, off);
    uint64_t *kids = bt_kids(t, n);
    for (uint32_t j = 0; j <= n->n_n; j++)
        bt_walk_node(t, kids[j], depth + 1, height, fn, arg);
}

void bt_walk(struct bt_tree *t, bt_node_fn fn, void *arg)
{
    const struct tf_header *h = tf_header(t->bt_s);
    bt_walk_node(t, h->h_bt_root, 1, h->h_bt_height, fn, arg);
}

/* The checker: a recursive walk carrying the key bounds. */
struct bt_chk {
    struct bt_tree *t;
    char *why;
    size_t len;
    uint32_t height;
    int strict;          /* fill lower bounds apply (no deletes yet) */
    uint64_t next_leaf;  /* the leaf the chain should reach next */
    int started;         /* next_leaf was set from the leftmost parent */
    uint64_t nodes;
};

static int bt_fail(struct bt_chk *c, const char *msg, uint64_t off)
{
    snprintf(c->why, c->len, "B+-tree node at offset %llu: %s",
             (unsigned long long)off, msg);
    return -1;
}

static int bt_check_node(struct bt_chk *c, uint64_t off, uint32_t depth,
                         int has_lo, uint64_t lo, int has_hi, uint64_t hi)
{
    struct bt_tree *t = c->t;
    const struct tf_header *h = tf_header(t->bt_s);
    if (off < TF_DATA || off + t->bt_block > h->h_file_bytes ||
        (off - TF_DATA) % TF_PAGE != 0)
        return bt_fail(c, "offset outside the file or misaligned", off);
    if (++c->nodes > h->h_file_bytes / t->bt_block)
        return bt_fail(c, "more nodes than fit in the file (a cycle?)", off);
    struct bt_node *n = bt_node(t, off);
    int leaf = depth == c->height;
    uint32_t cap = leaf ? t->bt_cap_leaf : t->bt_cap_int;
    int root = depth == 1;
    uint64_t *keys = bt_keys(n);

    if (n->n_leaf != (uint32_t)leaf)
        return bt_fail(c, "leaf flag disagrees with the depth", off);
    if (n->n_n > cap)
        return bt_fail(c, "more keys than the capacity", off);
    if (!leaf && n->n_n < 1)
        return bt_fail(c, "internal node without keys", off);
    if (c->strict && !root && n->n_n < cap / 2)
        return bt_fail(c, "less than half full without any delete", off);
    for (uint32_t i = 0; i < n->n_n; i++) {
        if (i > 0 && keys[i] <= keys[i - 1])
            return bt_fail(c, "keys not strictly ascending", off);
        if ((has_lo && keys[i] < lo) || (has_hi && keys[i] >= hi))
            return bt_fail(c, "key outside the parent's separators", off);
    }
    if (leaf) {
        uint16_t *slots = bt_slots(t, n);
        unsigned char *seen = calloc(n->n_n ? n->n_n : 1, 1);
        int bad = seen == NULL;
        for (uint32_t i = 0; i < n->n_n && !bad; i++) {
            bad = slots[i] >= n->n_n || seen[slots[i]];
            if (!bad)
                seen[slots[i]] = 1;
        }
        free(seen);
        if (bad)
            return bt_fail(c, "value slots are not 0 .. n-1 once each", off);
        if (c->next_leaf != off)
            return bt_fail(c, "leaf chain out of key order", off);
        c->next_leaf = n->n_next;
        return 0;
    }
    uint64_t *kids = bt_kids(t, n);
    for (uint32_t j = 0; j <= n->n_n; j++) {
        int clo = j > 0 || has_lo, chi = j < n->n_n || has_hi;
        uint64_t vlo = j > 0 ? keys[j - 1] : lo;
        uint64_t vhi = j < n->n_n ? keys[j] : hi;
        if (j == 0 && depth + 1 == c->height && !c->started) {
            c->next_leaf = kids[0];
            c->started = 1;
        }
        if (bt_check_node(c, kids[j], depth + 1, clo, vlo, chi, vhi) != 0)
            return -1;
    }
    return 0;
}

int bt_check(struct bt_tree *t, char *why, size_t len)
{
    const struct tf_header *h = tf_header(t->bt_s);
    struct bt_chk c = {t, why, len, h->h_bt_height, !h->h_deleted, 0, 0, 0};

    if (h->h_bt_height < 1 || h->h_bt_height >= BT_MAXH) {
        snprintf(why, len, "B+-tree height %u out of range",
                 h->h_bt_height);
        return -1;
    }
    if (h->h_bt_height == 1)
        c.next_leaf = h->h_bt_root;
    if (bt_check_node(&c, h->h_bt_root, 1, 0, 0, 0, 0) != 0)
        return -1;
    if (c.next_leaf != 0) {
        snprintf(why, len, "B+-tree: the last leaf's next is not 0");
        return -1;
    }
    return 0;
}
