/* test_26_tree_kv: the LIBXAC trees as a store of the search-tree driver
 * (trees/tree_kv.h, bench/common/kv_driver.h): the configurations its plan
 * makes for tree_insert and tree_blocks, and the calls the driver makes,
 * on a real durable tree: create, open for the timed processes and for the
 * parent's check, insert, search, scan, the counters, bytes in use and the
 * invariants. */
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "tree.h"
#include "tree_kv.h"
#include "xac_int.h"

#define COUNT 300

static const char *const durable[] = {"durable", NULL};
static const char *const nondurable[] = {"nondurable", NULL};

/* How many planned configurations are B+-trees, advised B+-trees and CO
 * B-trees (from their labels: "btree 4096", "btree advisory 4096",
 * "cobtree 0"). */
static void count_kinds(const struct xb_kv_store *st,
                        const struct xb_kv_config *cfgs, int n, int *bt,
                        int *adv, int *co)
{
    char label[128];
    *bt = *adv = *co = 0;
    for (int i = 0; i < n; i++) {
        st->label(&cfgs[i], label, sizeof label);
        if (strncmp(label, "cobtree", 7) == 0)
            ++*co;
        else if (strstr(label, "advisory") != NULL)
            ++*adv;
        else
            ++*bt;
    }
}

static void test_plans(void)
{
    static const struct tk_program insert = {
        "tree_insert", "", 0, "transactional", "insert"};
    static const struct tk_program blocks = {
        "tree_blocks", "", 1, "serial", "search"};
    struct xb_kv_config cfgs[XB_KV_MAX_CONFIGS];
    struct xb_kv_request rq = {NULL, nondurable, 1, COUNT};
    int bt, adv, co;

    const struct xb_kv_store *st = tk_store(&insert);
    test_cond("the trees' sut is libxac", strcmp(st->sut, "libxac") == 0);
    test_cond("tree_insert inserts by default",
              strcmp(st->default_op, "insert") == 0);
    test_cond("the trees are nondurable by default",
              strcmp(st->default_durability, "nondurable") == 0);
    int n = st->plan(&rq, cfgs);
    char label[128];
    st->label(&cfgs[0], label, sizeof label);
    test_cond("tree_insert plans one 4 KiB B+-tree by default",
              n == 1 && strcmp(label, "btree 4096") == 0);
    test_cond("its mode is the durability, its values 512 bytes",
              strcmp(cfgs[0].mode, "nondurable") == 0 &&
                  cfgs[0].value_bytes == 512 && cfgs[0].count == COUNT &&
                  cfgs[0].procs == 1);
    rq.tree = "all";
    n = st->plan(&rq, cfgs);
    count_kinds(st, cfgs, n, &bt, &adv, &co);
    test_cond("--tree all: the B+-tree, the advised one and the CO B-tree",
              n == 3 && bt == 1 && adv == 1 && co == 1);
    rq.tree = "cobtree";
    rq.modes = durable;
    rq.procs = 2;
    n = st->plan(&rq, cfgs);
    count_kinds(st, cfgs, n, &bt, &adv, &co);
    test_cond("--tree cobtree, durable, 2 processes: the CO B-tree alone",
              n == 1 && co == 1 && strcmp(cfgs[0].mode, "durable") == 0 &&
                  cfgs[0].procs == 2);

    st = tk_store(&blocks);
    test_cond("tree_blocks searches by default",
              strcmp(st->default_op, "search") == 0);
    rq = (struct xb_kv_request){NULL, nondurable, 1, COUNT};
    n = st->plan(&rq, cfgs);
    count_kinds(st, cfgs, n, &bt, &adv, &co);
    test_cond("tree_blocks sweeps 7 block sizes, then the CO B-tree",
              n == 8 && bt == 7 && adv == 0 && co == 1);
    rq.procs = 2;
    test_cond("the serial sweep measures nothing with 2 processes",
              st->plan(&rq, cfgs) == 0);
    rq.procs = 1;
    rq.modes = durable;
    test_cond("nor durable", st->plan(&rq, cfgs) == 0);
}

static int value_is(uint64_t key, const unsigned char *v, size_t len)
{
    unsigned char want[XB_VALUE_BYTES];
    xb_workload_value(key, want, sizeof want);
    return len == sizeof want && memcmp(want, v, len) == 0;
}

static void test_calls(void)
{
    static const struct tk_program insert = {
        "tree_insert", "", 0, "transactional", "insert"};
    const struct xb_kv_store *st = tk_store(&insert);
    struct xb_kv_config cfgs[XB_KV_MAX_CONFIGS];
    struct xb_kv_request rq = {"btree", durable, 1, COUNT};
    uint64_t keys[COUNT];
    unsigned char v[XB_VALUE_BYTES];
    struct xb_kv_counters c0, c1;
    void *h;

    memset(&c0, 0, sizeof c0);
    memset(&c1, 0, sizeof c1);
    test_cond("a durable B+-tree is planned", st->plan(&rq, cfgs) == 1);
    xb_workload_keys(keys, COUNT, XB_WORKLOAD_SEED, XB_ORDER_RANDOM);
    test_cond("create makes an empty tree", st->create(&cfgs[0], ".") == 0);
    test_cond("a timed process opens it",
              st->open(&cfgs[0], ".", XB_KV_MEASURE, &h) == 0);
    test_cond("its counters at opening", st->observe(h, &c0) == 0);
    test_cond("count a log and aborts (durable, transactional)",
              c0.has_log && c0.has_aborts);
    int failed = 0;
    for (int i = 0; i < COUNT; i++) {
        struct xb_kv_key key = {.n = keys[i]};
        xb_workload_value(keys[i], v, sizeof v);
        failed += st->insert(h, &key, v, sizeof v) != 0;
    }
    test_cond("every insert succeeds", failed == 0);
    size_t len = sizeof v;
    struct xb_kv_key key = {.n = keys[7]};
    test_cond("search finds a key with its value",
              st->search(h, &key, v, &len) == 1 && value_is(keys[7], v, len));
    key.n = 0;
    len = sizeof v;
    test_cond("and nothing for a key never inserted",
              st->search(h, &key, v, &len) == 0);
    test_cond("scan visits every key", st->scan(h) == COUNT);
    test_cond("the counters after the inserts", st->observe(h, &c1) == 0);
    test_cond("the log grew and synced",
              c1.log_bytes > c0.log_bytes && c1.log_syncs > c0.log_syncs);
    test_cond("one process never aborts", c1.aborts == c0.aborts);
    test_cond("closing commits everything", st->close(h) == 0);

    test_cond("the parent opens it to check",
              st->open(&cfgs[0], ".", XB_KV_CHECK, &h) == 0);
    test_cond("it holds every key", st->scan(h) == COUNT);
    test_cond("the bytes in use hold the values",
              st->bytes_used(h) >= (uint64_t)COUNT * XB_VALUE_BYTES);
    char why[256];
    test_cond("its invariants hold", st->check(h, why, sizeof why) == 0);
    test_cond("and it closes", st->close(h) == 0);
}

/* The parent loads through the serial version (a plain mmap); closing
 * that load hands the store to LIBXAC with one commit in a child, so the
 * timed processes find the data file's cache dropped already
 * (tk_hand_over; xac_seg.c, xseg_drop_cache). */
static void test_load_hands_over(void)
{
    static const struct tk_program insert = {
        "tree_insert", "", 0, "transactional", "insert"};
    const struct xb_kv_store *st = tk_store(&insert);
    struct xb_kv_config cfgs[XB_KV_MAX_CONFIGS];
    struct xb_kv_request rq = {"btree", nondurable, 1, COUNT};
    uint64_t keys[COUNT];
    unsigned char v[XB_VALUE_BYTES];
    void *h;

    xb_workload_keys(keys, COUNT, XB_WORKLOAD_SEED, XB_ORDER_RANDOM);
    test_cond("a nondurable B+-tree, in a directory of its own",
              st->plan(&rq, cfgs) == 1 && mkdir("load", 0700) == 0 &&
                  st->create(&cfgs[0], "load") == 0);
    test_cond("the parent loads it and closes the load",
              st->open(&cfgs[0], "load", XB_KV_LOAD, &h) == 0 &&
                  st->load(h, keys, COUNT) == 0 && st->close(h) == 0);
    test_cond("a timed process opens it",
              st->open(&cfgs[0], "load", XB_KV_MEASURE, &h) == 0);
    test_cond("and finds the cache dropped before its first write",
              xac_env.xe_seg.sg_hdr != NULL &&
                  xac_env.xe_seg.sg_hdr->sh_dropped == 1);
    size_t len = sizeof v;
    struct xb_kv_key key = {.n = keys[COUNT - 1]};
    test_cond("the loaded keys are there",
              st->search(h, &key, v, &len) == 1 &&
                  value_is(keys[COUNT - 1], v, len));
    test_cond("and it closes", st->close(h) == 0);
}

int main(void)
{
    tu_tmpdir();
    test_plans();
    test_calls();
    test_load_hands_over();
    return test_report();
}
