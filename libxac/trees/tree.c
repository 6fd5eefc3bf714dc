/* tree.c: see tree.h.  The only file where the two versions differ: each
 * operation runs between ts_begin() and ts_end() and is retried when the
 * transaction aborts.  On a TS_SERIAL store those calls do nothing. */
#include "tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btree.h"
#include "cobtree.h"
#include "tfile.h"

struct tr_tree {
    struct ts_store *tr_s;
    struct tr_config tr_cfg;
    struct bt_tree tr_bt;
    struct co_tree tr_co;
};

static const char *tr_reason = "";

/* Run stmt as one updating transaction, retried until it commits; a commit
 * error replaces the result. */
#define TR_TXN(s, rc, stmt)                                                \
    for (;;) {                                                             \
        ts_begin(s);                                                       \
        stmt;                                                              \
        int tr_st_ = ts_end(s);                                            \
        if (tr_st_ == COMMITTED)                                           \
            break;                                                         \
        if (tr_st_ != ABORTED) {                                           \
            rc = tr_st_;                                                   \
            break;                                                         \
        }                                                                  \
    }

/* The same, read-only: it always commits. */
#define TR_QUERY(s, stmt)                                                  \
    do {                                                                   \
        ts_begin_query(s);                                                 \
        stmt;                                                              \
        (void)ts_end_query(s);                                             \
    } while (0)

int tr_create(struct ts_store *s, const struct tr_config *cfg)
{
    int rc = 0;

    if (cfg->value_bytes < 1 || cfg->value_bytes > 4096)
        return TR_EINVAL;
    if (cfg->kind == TR_BTREE &&
        (cfg->block_bytes < BT_MIN_BLOCK || cfg->block_bytes > BT_MAX_BLOCK ||
         (cfg->block_bytes & (cfg->block_bytes - 1)) != 0 ||
         bt_cap_leaf(cfg->block_bytes, cfg->value_bytes) == 0))
        return TR_EINVAL;
    if (cfg->kind != TR_BTREE && cfg->kind != TR_COBTREE)
        return TR_EINVAL;
    TR_TXN(s, rc, {
        tf_format(s, (enum tf_kind)cfg->kind, cfg->value_bytes,
                  cfg->kind == TR_BTREE ? cfg->block_bytes : 0);
        rc = cfg->kind == TR_BTREE ? bt_format(s) : co_format(s);
        if (rc != 0 && s->ts_kind == TS_XAC)
            xFail();
    });
    return rc;
}

int tr_open(struct ts_store *s, tr_tree **out)
{
    tr_tree *t = calloc(1, sizeof *t);
    const char *bad;

    if (t == NULL)
        return 12; /* ENOMEM */
    t->tr_s = s;
    TR_QUERY(s, {
        bad = tf_check_header(s);
        if (bad == NULL) {
            const struct tf_header *h = tf_header(s);
            t->tr_cfg.kind = (enum tr_kind)h->h_kind;
            t->tr_cfg.block_bytes = h->h_block_bytes;
            t->tr_cfg.value_bytes = h->h_value_bytes;
            if (h->h_kind == TF_BTREE)
                bt_attach(&t->tr_bt, s);
            else
                co_attach(&t->tr_co, s);
        }
    });
    if (bad != NULL) {
        tr_reason = bad;
        free(t);
        return TR_EBADFILE;
    }
    *out = t;
    return 0;
}

const char *tr_bad_file_reason(void)
{
    return tr_reason;
}

void tr_close(tr_tree *t)
{
    free(t);
}

void tr_config_of(const tr_tree *t, struct tr_config *cfg)
{
    *cfg = t->tr_cfg;
}

int tr_insert(tr_tree *t, uint64_t key, const void *val)
{
    int rc = 0;
    TR_TXN(t->tr_s, rc,
           rc = t->tr_cfg.kind == TR_BTREE ? bt_insert(&t->tr_bt, key, val)
                                           : co_insert(&t->tr_co, key, val));
    return rc;
}

int tr_search(tr_tree *t, uint64_t key, void *val)
{
    int rc;
    TR_QUERY(t->tr_s,
             rc = t->tr_cfg.kind == TR_BTREE ? bt_search(&t->tr_bt, key, val)
                                             : co_search(&t->tr_co, key, val));
    return rc;
}

int tr_delete(tr_tree *t, uint64_t key)
{
    int rc = 0;
    TR_TXN(t->tr_s, rc,
           rc = t->tr_cfg.kind == TR_BTREE ? bt_delete(&t->tr_bt, key)
                                           : co_delete(&t->tr_co, key));
    return rc;
}

long long tr_range(tr_tree *t, uint64_t lo, uint64_t hi, tr_visit_fn fn,
                   void *arg)
{
    long long n;
    TR_QUERY(t->tr_s,
             n = t->tr_cfg.kind == TR_BTREE
                     ? bt_range(&t->tr_bt, lo, hi, fn, arg)
                     : co_range(&t->tr_co, lo, hi, fn, arg));
    return n;
}

int tr_check(tr_tree *t, char *why, size_t len)
{
    int rc;
    TR_QUERY(t->tr_s, {
        const char *bad = tf_check_header(t->tr_s);
        if (bad != NULL) {
            snprintf(why, len, "%s", bad);
            rc = -1;
        } else {
            rc = t->tr_cfg.kind == TR_BTREE ? bt_check(&t->tr_bt, why, len)
                                            : co_check(&t->tr_co, why, len);
        }
    });
    return rc;
}

uint64_t tr_bytes_used(tr_tree *t)
{
    uint64_t n;
    TR_QUERY(t->tr_s, n = tf_used(t->tr_s));
    return n;
}

const char *tr_page_kind_name(enum tr_page_kind kind)
{
    static const char *const names[TR_PAGE_KINDS] = {
        "header", "allocator", "root",     "inner", "leaf",
        "heap",   "segments",  "index",    "free"};
    return kind < TR_PAGE_KINDS ? names[kind] : "?";
}

/* The B+-tree's nodes with their kinds, sorted by offset for lookup. */
struct tr_node_kind {
    uint64_t off;
    enum tr_page_kind kind;
};

struct tr_nodes {
    struct tr_node_kind *v;
    size_t n, cap;
    uint32_t height;
    int failed;
};

static void tr_add_node(void *arg, uint64_t off, uint32_t depth)
{
    struct tr_nodes *ns = arg;
    if (ns->n == ns->cap) {
        size_t cap = ns->cap ? 2 * ns->cap : 256;
        struct tr_node_kind *v = realloc(ns->v, cap * sizeof *v);
        if (v == NULL) {
            ns->failed = 1;
            return;
        }
        ns->v = v;
        ns->cap = cap;
    }
    ns->v[ns->n++] = (struct tr_node_kind){
        off, depth == 1             ? TR_PAGE_ROOT
             : depth == ns->height ? TR_PAGE_LEAF
                                   : TR_PAGE_INNER};
}

static int tr_by_off(const void *a, const void *b)
{
    uint64_t x = ((const struct tr_node_kind *)a)->off;
    uint64_t y = ((const struct tr_node_kind *)b)->off;
    return (x > y) - (x < y);
}

/* The node holding the byte at off, or TR_PAGE_FREE. */
static enum tr_page_kind tr_node_at(const struct tr_nodes *ns, uint64_t off,
                                    uint32_t block)
{
    size_t lo = 0, hi = ns->n;
    while (lo < hi) { /* first node starting after off */
        size_t mid = lo + (hi - lo) / 2;
        if (ns->v[mid].off <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && off < ns->v[lo - 1].off + block ? ns->v[lo - 1].kind
                                                      : TR_PAGE_FREE;
}

static const enum tr_page_kind tr_co_kinds[5] = {
    TR_PAGE_FREE, TR_PAGE_HEAP, TR_PAGE_SEGMENTS, TR_PAGE_INDEX,
    TR_PAGE_ALLOCATOR};

int tr_page_kinds(tr_tree *t, const uint64_t *pages, size_t n,
                  enum tr_page_kind *kinds)
{
    struct tr_nodes ns = {0};
    TR_QUERY(t->tr_s, {
        ns.n = 0;
        ns.height = tf_header(t->tr_s)->h_bt_height;
        if (t->tr_cfg.kind == TR_BTREE) {
            bt_walk(&t->tr_bt, tr_add_node, &ns);
            if (!ns.failed)
                qsort(ns.v, ns.n, sizeof *ns.v, tr_by_off);
        }
        for (size_t i = 0; i < n && !ns.failed; i++) {
            uint64_t off = pages[i] * TF_PAGE;
            int meta = tf_meta_page(off);
            kinds[i] = meta == 1   ? TR_PAGE_HEADER
                       : meta == 2 ? TR_PAGE_ALLOCATOR
                       : t->tr_cfg.kind == TR_BTREE
                           ? tr_node_at(&ns, off, t->tr_cfg.block_bytes)
                           : tr_co_kinds[co_page_kind(&t->tr_co, off)];
        }
    });
    free(ns.v);
    return ns.failed ? 12 /* ENOMEM */ : 0;
}

size_t tr_file_bytes(const struct tr_config *cfg, uint64_t n)
{
    uint64_t rec = 8u + cfg->value_bytes, bytes;
    if (cfg->kind == TR_BTREE) {
        /* Every node at its lower fill bound floor(cap/2) (sorted inserts
         * come close), plus slack. */
        uint64_t half = bt_cap_leaf(cfg->block_bytes, cfg->value_bytes) / 2;
        uint64_t leaves = n / (half ? half : 1) + 1;
        uint64_t inner = leaves / (bt_cap_int(cfg->block_bytes) / 2) + 1;
        bytes = (leaves + 2 * inner + 64) * cfg->block_bytes;
    } else
        /* The array at density >= 3/8 and the one it grew from. */
        bytes = 8 * n * rec + 64 * rec * 4 + (1u << 20);
    bytes += bytes / 4 + (4u << 20);
    /* Room for every arena's run and the CO B-tree's heap lanes: a file
     * with processes on every arena still has its slack (it is sparse). */
    bytes += TF_DATA + (uint64_t)TF_ARENAS * TF_ARENA_CHUNK +
             (uint64_t)TF_HEAP_LANES * TF_PAGE;
    return (size_t)((bytes + TF_PAGE - 1) & ~(uint64_t)(TF_PAGE - 1));
}

const char *tr_kind_name(enum tr_kind kind)
{
    return kind == TR_BTREE ? "btree" : kind == TR_COBTREE ? "cobtree" : "?";
}

const char *tr_strerror(int code)
{
    switch (code) {
    case TR_EFULL:
        return "the tree file is full";
    case TR_EBADFILE:
        return "not a tree file this code reads";
    case TR_EINVAL:
        return "invalid tree configuration";
    default:
        return xStrerror(code);
    }
}
