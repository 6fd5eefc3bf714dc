/* tree_kv.c: see tree_kv.h. */
#include "tree_kv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "procs.h"
#include "tree.h"
#include "tree_opts.h"
#include "workload.h"

#define TK_FILE "tree.db"

/* The tree part of a configuration. */
struct tk_config {
    struct tr_config tree;
    int advisory;
    enum ts_kind version;
    enum ts_durability durability;
    size_t file_bytes;
};

struct tk_handle {
    struct ts_store s;
    tr_tree *t;
    uint32_t value_bytes;
    /* A load of a transactional configuration: where, and which one, for
     * the hand-over at close (tk_hand_over). */
    const struct tk_config *load_of;
    const char *dir;
};

/* Which of the counters' own readings holds what (tk_params). */
enum { OWN_KEEP_PAGES, OWN_UFFD, OWN_PTE, OWN_WORKING_MIB, OWN_WRITERS,
       OWN_TURN, OWN_ESCALATE, OWN_LOCK_SPIN, OWN_HANDOFF, OWN_COUNT };

_Static_assert(OWN_COUNT <= sizeof((struct xb_kv_counters *)0)->own /
                                sizeof(long long),
               "every reading has its place");


static const struct tk_program *tk_pg;
static struct tk_config tk_configs[XB_KV_MAX_CONFIGS];

/* The store's own options. */
static long long tk_block = -1, tk_value_bytes = XB_VALUE_BYTES;
static int tk_advisory;
static const char *tk_version;

static const char *tk_name(void)
{
    return tk_pg->prog;
}

static const struct tk_config *tk_of(const struct xb_kv_config *cfg)
{
    return cfg->own;
}

/* Open the store as the use needs it: the timed processes in the
 * configuration's version (so is a recovery after a crash), the parent's
 * load and check through the serial one. */
static int tk_open(const struct xb_kv_config *cfg, const char *dir,
                   enum xb_kv_use use, void **hp)
{
    const struct tk_config *c = tk_of(cfg);
    struct ts_config tc = {TS_SERIAL, TS_NONDURABLE, 0};
    if (use == XB_KV_MEASURE || use == XB_KV_RECOVER)
        tc = (struct ts_config){c->version, c->durability, c->advisory};
    struct tk_handle *h = calloc(1, sizeof *h);
    if (h == NULL)
        return -1;
    h->value_bytes = cfg->value_bytes;
    if (use == XB_KV_LOAD && c->version == TS_XAC) {
        h->load_of = c;
        h->dir = dir;
    }
    int rc = ts_open_config(&h->s, &tc, dir, TK_FILE, c->file_bytes);
    if (rc == XAC_EBUSY) {
        free(h);
        return XB_KV_REFUSED;
    }
    if (rc == 0 && (rc = tr_open(&h->s, &h->t)) != 0)
        ts_close(&h->s);
    if (rc != 0) {
        fprintf(stderr, "%s: cannot open the tree: %s\n", tk_name(),
                tr_strerror(rc));
        free(h);
        return -1;
    }
    *hp = h;
    return 0;
}

/* The parent loads a store through the serial version, a plain mmap(),
 * which leaves the file's page cache in large folios; the first LIBXAC
 * write into the file then drops that cache and reads it back
 * (xseg_drop_cache, docs/libxac-durability.md), once per store.  A store
 * a LIBXAC program had loaded would not need it, and the timed processes
 * would pay it: a lone writer into a loaded 16,000-key tree lost about a
 * third of its rate.  So after the load one LIBXAC session, in a child
 * (the parent stays free of LIBXAC), rewrites the tree's first word with
 * itself, commits and leaves: the drop happens here, untimed, and the
 * next session finds the store as LIBXAC leaves it.  0 or -1 (said). */
struct tk_hand {
    const struct tk_config *c;
    const char *dir;
};

static int tk_hand_over_child(const struct xb_proc *self, int k, void *arg)
{
    const struct tk_hand *a = arg;
    struct ts_store s;
    struct ts_config tc = {a->c->version, a->c->durability, 0};
    (void)k;
    if (ts_open_config(&s, &tc, a->dir, TK_FILE, a->c->file_bytes) != 0) {
        xb_proc_ready(self, 'f');
        return 1;
    }
    if (!xb_proc_ready(self, XB_PROC_READY)) {
        ts_close(&s);
        return 1;
    }
    volatile uint64_t *first = (volatile uint64_t *)s.ts_base;
    do {
        ts_begin(&s);
        *first = *first;
    } while (ts_end(&s) == ABORTED);
    return ts_close(&s) == 0 ? 0 : 1;
}

static int tk_hand_over(const struct tk_config *c, const char *dir)
{
    struct tk_hand a = {c, dir};
    struct xb_procs g;
    if (xb_procs_run(&g, 1, tk_hand_over_child, &a) == 1 && g.nfailed == 0)
        return 0;
    fprintf(stderr, "%s: the store's hand-over to LIBXAC after its load "
            "failed\n", tk_name());
    return -1;
}

static int tk_close(void *hv)
{
    struct tk_handle *h = hv;
    tr_close(h->t);
    int rc = ts_close(&h->s);
    const struct tk_config *load_of = h->load_of;
    const char *dir = h->dir;
    free(h);
    if (rc != 0) {
        fprintf(stderr, "%s: cannot close the tree: %s\n", tk_name(),
                tr_strerror(rc));
        return -1;
    }
    return load_of != NULL ? tk_hand_over(load_of, dir) : 0;
}

/* Format an empty tree, through the serial version. */
static int tk_create(const struct xb_kv_config *cfg, const char *dir)
{
    const struct tk_config *c = tk_of(cfg);
    struct ts_store s;
    int rc = ts_open(&s, TS_SERIAL, dir, TK_FILE, c->file_bytes, 0);
    if (rc == 0) {
        rc = tr_create(&s, &c->tree);
        /* The format is written through a plain mapping: make it durable
         * before a durable store is built on it (the crash suite's power
         * loss found trees whose header never reached the disk). */
        if (rc == 0 && msync(s.ts_base, s.ts_len, MS_SYNC) != 0)
            rc = -1;
        if (ts_close(&s) != 0 && rc == 0)
            rc = -1;
    }
    if (rc != 0)
        fprintf(stderr, "%s: cannot create the tree: %s\n", tk_name(),
                tr_strerror(rc));
    return rc != 0 ? -1 : 0;
}

static int tk_insert(void *hv, const struct xb_kv_key *key,
                     const unsigned char *val, size_t vlen)
{
    struct tk_handle *h = hv;
    (void)vlen; /* the tree's value_bytes */
    int rc = tr_insert(h->t, key->n, val);
    if (rc < 0) {
        fprintf(stderr, "%s: insert failed: %s\n", tk_name(),
                tr_strerror(rc));
        return -1;
    }
    return 0;
}

static int tk_load(void *hv, const uint64_t *keys, size_t n)
{
    struct tk_handle *h = hv;
    unsigned char v[XB_KV_MAX_VALUE];
    for (size_t i = 0; i < n; i++) {
        struct xb_kv_key key = {.n = keys[i]};
        xb_workload_value(keys[i], v, h->value_bytes);
        if (tk_insert(h, &key, v, h->value_bytes) != 0)
            return -1;
    }
    return 0;
}

static int tk_search(void *hv, const struct xb_kv_key *key,
                     unsigned char *val, size_t *vlen)
{
    struct tk_handle *h = hv;
    int found = tr_search(h->t, key->n, val);
    if (found == 1)
        *vlen = h->value_bytes;
    return found;
}

static long long tk_scan(void *hv)
{
    struct tk_handle *h = hv;
    return tr_range(h->t, 0, UINT64_MAX, NULL, NULL);
}

/* The pages this process's conflict aborts were blamed on, most aborts
 * first (xConflicts()); the parent asks what they hold (tk_classify). */
static int tk_conflicts(struct xb_kv_counters *c)
{
    struct xac_conflict cf[XB_KV_CONFLICT_PAGES];
    int n = xConflicts(cf, XB_KV_CONFLICT_PAGES);
    if (n < 0) {
        fprintf(stderr, "%s: xConflicts failed: %s\n", tk_name(),
                xStrerror(n));
        return -1;
    }
    c->nconflict = n < XB_KV_CONFLICT_PAGES ? n : XB_KV_CONFLICT_PAGES;
    for (int i = 0; i < c->nconflict; i++)
        c->conflict[i] = (struct xb_kv_conflict){cf[i].page, cf[i].aborts};
    return 0;
}

static int tk_classify(void *hv, const uint64_t *pages, size_t n, int *kinds)
{
    struct tk_handle *h = hv;
    enum tr_page_kind *k = malloc((n ? n : 1) * sizeof *k);
    int rc = k != NULL ? tr_page_kinds(h->t, pages, n, k) : -1;
    for (size_t i = 0; i < n && rc == 0; i++)
        kinds[i] = (int)k[i];
    free(k);
    if (rc != 0)
        fprintf(stderr, "%s: cannot tell which pages conflicted.\n",
                tk_name());
    return rc != 0 ? -1 : 0;
}

static int tk_observe(void *hv, struct xb_kv_counters *c)
{
    struct tk_handle *h = hv;
    struct xac_stats st;
    if (ts_stats(&h->s, &st) != 0) {
        fprintf(stderr, "%s: xStats failed.\n", tk_name());
        return -1;
    }
    if (h->s.ts_kind == TS_XAC) {
        c->has_contention = 1;
        c->commits = st.commits;
        c->conflict_aborts = st.conflict_aborts;
        c->retries_max = st.retries_max;
        c->aborted_ns = st.aborted_ns;
        c->waited_ns = st.admission_wait_ns + st.irrevocable_wait_ns;
        c->escalations = st.escalations;
        c->faults = st.faults;
        c->page_copies = st.pages_copied;
        c->new_pages = st.pages_new;
        if (tk_conflicts(c) != 0)
            return -1;
    }
    c->has_log = h->s.ts_durability == TS_DURABLE;
    c->has_aborts = h->s.ts_kind == TS_XAC;
    c->log_bytes = st.log_bytes;
    c->log_syncs = st.log_syncs;
    c->aborts = h->s.ts_aborts;
    c->own[OWN_KEEP_PAGES] = st.keep_pages;
    c->own[OWN_UFFD] = st.uffd;
    c->own[OWN_PTE] = st.page_table_access;
    c->own[OWN_WORKING_MIB] = (long long)st.working_mib;
    c->own[OWN_WRITERS] = st.writers;
    c->own[OWN_TURN] = st.turn_us;
    c->own[OWN_ESCALATE] = st.escalate_after;
    c->own[OWN_LOCK_SPIN] = st.lock_spin_us;
    c->own[OWN_HANDOFF] = st.handoff_us;
    return 0;
}

static const char *const tk_page_kind_names[TR_PAGE_KINDS + 1] = {
    "header", "allocator", "root", "inner", "leaf",
    "heap",   "segments",  "index", "free", NULL};

_Static_assert(TR_PAGE_KINDS <= XB_KV_PAGE_KINDS, "every kind counted");

static unsigned tk_page_kinds_of(const struct xb_kv_config *cfg)
{
    const struct tk_config *c = tk_of(cfg);
    unsigned both = 1u << TR_PAGE_HEADER | 1u << TR_PAGE_ALLOCATOR |
                    1u << TR_PAGE_FREE;
    if (c->tree.kind == TR_BTREE)
        return both | 1u << TR_PAGE_ROOT | 1u << TR_PAGE_INNER |
               1u << TR_PAGE_LEAF;
    return both | 1u << TR_PAGE_HEAP | 1u << TR_PAGE_SEGMENTS |
           1u << TR_PAGE_INDEX;
}

static uint64_t tk_bytes_used(void *hv)
{
    struct tk_handle *h = hv;
    return tr_bytes_used(h->t);
}

static int tk_check(void *hv, char *why, size_t len)
{
    struct tk_handle *h = hv;
    return tr_check(h->t, why, len);
}

static void tk_params(const struct xb_kv_config *cfg,
                      const struct xb_kv_counters *counters, xb_result *r)
{
    const struct tk_config *c = tk_of(cfg);
    xb_param_str(r, "tree", tr_kind_name(c->tree.kind));
    xb_param_int(r, "block_bytes",
                 c->tree.kind == TR_BTREE ? c->tree.block_bytes : 0);
    xb_param_bool(r, "advisory", c->advisory);
    xb_param_str(r, "version",
                 c->version == TS_XAC ? "transactional" : "serial");
    if (c->version != TS_XAC)
        return;
    xb_param_bool(r, "keep_pages", (int)counters->own[OWN_KEEP_PAGES]);
    xb_param_str(r, "write_protect",
                 counters->own[OWN_UFFD] ? "uffd" : "mprotect");
    xb_param_str(r, "access_control",
                 counters->own[OWN_PTE] ? "pte" : "mprotect");
    xb_param_int(r, "working_mib", counters->own[OWN_WORKING_MIB]);
    xb_param_int(r, "writers", counters->own[OWN_WRITERS]);
    xb_param_int(r, "turn_us", counters->own[OWN_TURN]);
    xb_param_int(r, "escalate_after", counters->own[OWN_ESCALATE]);
    xb_param_int(r, "lock_spin_us", counters->own[OWN_LOCK_SPIN]);
    xb_param_int(r, "handoff_us", counters->own[OWN_HANDOFF]);
}

static void tk_label(const struct xb_kv_config *cfg, char *buf, size_t len)
{
    const struct tk_config *c = tk_of(cfg);
    snprintf(buf, len, "%s%s %u", tr_kind_name(c->tree.kind),
             c->advisory ? " advisory" : "", c->tree.block_bytes);
}

/* Add one configuration; -1 if the value does not fit the block. */
static int tk_add(struct xb_kv_config *cfgs, int *n,
                  const struct xb_kv_request *rq, enum tr_kind kind,
                  uint32_t block, int advisory, enum ts_kind version)
{
    struct tk_config *c = &tk_configs[*n];
    uint32_t vb = (uint32_t)tk_value_bytes;
    if (kind == TR_BTREE && vb + 8 > (block - 16) / 2) {
        fprintf(stderr, "%s: a %u-byte block holds fewer than two %u-byte "
                "values.\n", tk_name(), block, vb);
        return -1;
    }
    c->tree = (struct tr_config){kind, block, vb};
    c->advisory = advisory;
    c->version = version;
    c->durability = strcmp(rq->modes[0], "durable") == 0 ? TS_DURABLE
                                                           : TS_NONDURABLE;
    c->file_bytes = tr_file_bytes(&c->tree, (uint64_t)rq->count);
    cfgs[*n] = (struct xb_kv_config){rq->modes[0], rq->procs, rq->count, vb,
                                     c};
    (*n)++;
    return 0;
}

/* What only the transactional version has, if the request needs it. */
static const char *tk_needs(const struct xb_kv_request *rq, int want_adv)
{
    return strcmp(rq->modes[0], "durable") == 0 ? "--durability durable"
           : rq->procs > 1                      ? "--procs above 1"
           : want_adv                           ? "--tree btree-advisory"
                                                : NULL;
}

static int tk_plan(const struct xb_kv_request *rq, struct xb_kv_config *cfgs)
{
    const char *prog = tk_name();
    if (tk_block >= 0 && (tk_block & (tk_block - 1)) != 0) {
        fprintf(stderr, "%s: --block-bytes must be a power of two.\n", prog);
        return -1;
    }
    const char *sel = rq->tree != NULL ? rq->tree
                      : tk_pg->sweep   ? "all"
                                       : "btree";
    if (tk_advisory) {
        if (rq->tree != NULL && strcmp(rq->tree, "btree") != 0 &&
            strcmp(rq->tree, "btree-advisory") != 0) {
            fprintf(stderr, "%s: --advisory only applies to --tree btree.\n",
                    prog);
            return -1;
        }
        sel = "btree-advisory";
    }
    const char *ver =
        tk_version != NULL ? tk_version : tk_pg->default_version;
    enum ts_kind version = strcmp(ver, "serial") == 0 ? TS_SERIAL : TS_XAC;
    int want_bt = strcmp(sel, "btree") == 0 || strcmp(sel, "all") == 0;
    int want_adv = strcmp(sel, "btree-advisory") == 0 ||
                   (strcmp(sel, "all") == 0 && version == TS_XAC);
    int want_co = strcmp(sel, "cobtree") == 0 || strcmp(sel, "all") == 0;
    int n = 0;
    for (int a = 0; a < 2; a++)
        for (uint32_t b = 4096; (a ? want_adv : want_bt) && b <= 262144;
             b *= 2) {
            if (tk_block >= 0 ? b != (uint32_t)tk_block
                              : !tk_pg->sweep && b != 4096)
                continue;
            if (tk_add(cfgs, &n, rq, TR_BTREE, b, a, version) != 0)
                return -1;
        }
    if (want_co)
        tk_add(cfgs, &n, rq, TR_COBTREE, 0, 0, version);

    /* A program that measures the serial trees by default (tree_blocks) is
     * told these by the suite-wide options of a run meant for the others:
     * it says so and measures nothing.  Asked for the serial version, it
     * is an error. */
    const char *needs = tk_needs(rq, want_adv);
    if (version == TS_SERIAL && needs != NULL) {
        if (tk_version != NULL) {
            fprintf(stderr, "%s: %s needs --version transactional (the "
                    "serial version is one process without log or advisory "
                    "calls).\n", prog, needs);
            return -1;
        }
        fprintf(stderr, "%s: %s needs the transactional version, and this "
                "program measures the serial trees unless --version "
                "transactional is given, so it measures nothing here.\n",
                prog, needs);
        return 0;
    }
    return n;
}

static const char *const tk_versions[] = {"transactional", "serial", NULL};
static const char *const tk_modes[] = {"durable", "nondurable", NULL};
static const char *const tk_durable[] = {"durable", NULL};
static const char *const tk_nondurable[] = {"nondurable", NULL};

/* The option table; the help of three entries depends on the program. */
enum { OPT_BLOCK, OPT_ADVISORY, OPT_VALUE, OPT_VERSION };
static struct xb_opt tk_options[] = {
    {"block-bytes", XB_OPT_INT, &tk_block, 4096, 262144, NULL, NULL},
    {"advisory", XB_OPT_FLAG, &tk_advisory, 0, 0, NULL,
     "the same as --tree btree-advisory"},
    {"value-bytes", XB_OPT_INT, &tk_value_bytes, 1, XB_KV_MAX_VALUE, NULL,
     "value size (default 512, as the baselines)"},
    {"version", XB_OPT_CHOICE, &tk_version, 0, 0, tk_versions, NULL},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

/* Help that differs between one tree (tree_insert) and a sweep
 * (tree_blocks). */
struct tk_help {
    const char *tree, *block, *version;
};
static const struct tk_help tk_helps[2] = {
    {"btree (default), btree-advisory (the B+-tree calling setPageAccess), "
     "cobtree, or all three in turn",
     "B+-tree node size, a power of two (default 4096)",
     "transactional (LIBXAC; the default) or serial (plain mmap, one "
     "process)"},
    {"btree: every block size; btree-advisory: the same with advisory calls "
     "(transactional); cobtree; all (default): every block size, then the "
     "CO B-tree (transactional: the advisory block sizes too)",
     "only this B+-tree block size (power of two)",
     "transactional (LIBXAC) or serial (plain mmap, one process; the "
     "default)"}};

static struct xb_kv_store tk_kv = {
    .sut = "libxac",
    .modes = tk_modes,
    .modes_help = "this program's spelling of --durability (both given must "
                  "agree)",
    .durable_modes = tk_durable,
    .nondurable_modes = tk_nondurable,
    .default_durability = "nondurable",
    .durability_help =
        "durable: every operation one DURABLE LIBXAC transaction "
        "(xInit(dir, DURABLE): redo log, recovery); nondurable (default): "
        "xInit(dir, NONDURABLE)",
    .options = tk_options,
    .latency_top = 1,
    .refused = "this LIBXAC refuses a second live process (XAC_EBUSY), so "
               "--procs must be 1 until multi-process transactions are "
               "supported.",
    .plan = tk_plan,
    .label = tk_label,
    .create = tk_create,
    .open = tk_open,
    .insert = tk_insert,
    .load = tk_load,
    .search = tk_search,
    .scan = tk_scan,
    .close = tk_close,
    .observe = tk_observe,
    .bytes_used = tk_bytes_used,
    .check = tk_check,
    .page_kind_names = tk_page_kind_names,
    .page_kinds_of = tk_page_kinds_of,
    .classify = tk_classify,
    .params = tk_params,
};

const struct xb_kv_store *tk_store(const struct tk_program *pg)
{
    const struct tk_help *help = &tk_helps[pg->sweep != 0];
    tk_pg = pg;
    tk_kv.prog = pg->prog;
    tk_kv.synopsis = pg->synopsis;
    tk_kv.default_op = pg->default_op;
    tk_kv.tree_help = help->tree;
    tk_options[OPT_BLOCK].help = help->block;
    tk_options[OPT_VERSION].help = help->version;
    return &tk_kv;
}
