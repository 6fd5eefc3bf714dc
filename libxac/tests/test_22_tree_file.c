/* test_22_tree_file: the tree file's header, bad configurations, a full
 * file, and that the checkers notice corruption. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "cobtree.h"
#include "tfile.h"
#include "tree.h"

static void fill(tr_tree *t, int n)
{
    unsigned char v[64] = {1};
    for (int i = 0; i < n; i++)
        tr_insert(t, (uint64_t)i * 7919, v);
}

/* Allocation arenas: a process's small allocations come from its own
 * arena record, so page 1, which every process shares, is written once a
 * TF_ARENA_CHUNK run, and a process with another arena takes a run of its
 * own and leaves this one's record alone. */
static void arenas(void)
{
    struct ts_store s;
    E(ts_open(&s, TS_SERIAL, ".", "arena.db", TF_DATA + 4 * TF_ARENA_CHUNK,
              0));
    tf_format(&s, TF_BTREE, 64, 4096);
    const struct tf_alloc *al = ts_at(&s, TF_PAGE);
    const struct tf_arena *mine =
        ts_at(&s, (2u + (uint64_t)getpid() % TF_ARENAS) * TF_PAGE);
    uint64_t first = tf_alloc(&s, TF_PAGE), next = al->a_next;
    int ok = first == TF_DATA && next == TF_DATA + TF_ARENA_CHUNK;
    for (uint64_t i = 1; i < TF_ARENA_CHUNK / TF_PAGE && ok; i++)
        ok = tf_alloc(&s, TF_PAGE) == first + i * TF_PAGE &&
             al->a_next == next;
    test_cond("a run's allocations after its first leave page 1 alone", ok);
    test_cond("the next run is taken from page 1",
              tf_alloc(&s, TF_PAGE) == next &&
                  al->a_next == next + TF_ARENA_CHUNK);
    struct tf_arena before = *mine;
    int status = 0, tries = 0;
    pid_t pid;
    do { /* a child on another arena (1 in 64 shares this one's) */
        pid = fork();
        if (pid == 0) {
            if ((uint64_t)getpid() % TF_ARENAS ==
                (uint64_t)getppid() % TF_ARENAS)
                _exit(3);
            uint64_t off = tf_alloc(&s, TF_PAGE);
            _exit(off == next + TF_ARENA_CHUNK ? 0 : 1);
        }
        if (pid < 0 || waitpid(pid, &status, 0) != pid)
            abort();
    } while (WIFEXITED(status) && WEXITSTATUS(status) == 3 && ++tries < 10);
    test_cond("a process on another arena takes a run of its own",
              WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
                  al->a_next == next + 2 * TF_ARENA_CHUNK);
    test_cond("and leaves this process's arena record alone",
              memcmp(&before, mine, sizeof before) == 0 &&
                  tf_alloc(&s, TF_PAGE) == next + TF_PAGE);
    E(ts_close(&s));
}

int main(void)
{
    struct ts_store s;
    tr_tree *t;
    char why[256];
    tu_tmpdir();
    arenas();

    struct tr_config bad1 = {TR_BTREE, 5000, 64}, bad2 = {TR_BTREE, 4096, 0};
    struct tr_config bad3 = {TR_BTREE, 1u << 20, 64};
    E(ts_open(&s, TS_SERIAL, ".", "cfg.db", 1u << 20, 0));
    test_cond("block size not a power of two is refused",
              tr_create(&s, &bad1) == TR_EINVAL);
    test_cond("value size 0 is refused", tr_create(&s, &bad2) == TR_EINVAL);
    test_cond("block size above 256 KiB is refused",
              tr_create(&s, &bad3) == TR_EINVAL);
    test_cond("an unformatted file is not a tree",
              tr_open(&s, &t) == TR_EBADFILE);
    E(ts_close(&s));

    /* A small file fills up; the tree stays intact. */
    struct tr_config bc = {TR_BTREE, 4096, 64};
    E(ts_open(&s, TS_SERIAL, ".", "full.db", TF_DATA + 62 * 4096, 0));
    E(tr_create(&s, &bc));
    E(tr_open(&s, &t));
    unsigned char v[64] = {2};
    int rc = 0, i;
    for (i = 0; i < 100000 && rc >= 0; i++)
        rc = tr_insert(t, (uint64_t)i * 2654435761u, v);
    test_cond("a full file gives TR_EFULL", rc == TR_EFULL);
    test_cond("the tree is intact after TR_EFULL",
              tr_check(t, why, sizeof why) == 0 &&
                  tr_range(t, 0, UINT64_MAX, NULL, NULL) == i - 1);
    tr_close(t);
    E(ts_close(&s));

    struct tr_config cc = {TR_COBTREE, 0, 64};
    E(ts_open(&s, TS_SERIAL, ".", "cofull.db",
                 TF_DATA + (TF_HEAP_LANES + 62) * 4096, 0));
    E(tr_create(&s, &cc));
    E(tr_open(&s, &t));
    for (i = 0, rc = 0; i < 100000 && rc >= 0; i++)
        rc = tr_insert(t, (uint64_t)i * 2654435761u, v);
    test_cond("a full file gives TR_EFULL (CO B-tree)", rc == TR_EFULL);
    test_cond("the CO B-tree is intact after TR_EFULL",
              tr_check(t, why, sizeof why) == 0 &&
                  tr_range(t, 0, UINT64_MAX, NULL, NULL) == i - 1);
    tr_close(t);
    E(ts_close(&s));

    /* Corruption is noticed. */
    E(ts_open(&s, TS_SERIAL, ".", "bt.db", 4u << 20, 0));
    E(tr_create(&s, &bc));
    E(tr_open(&s, &t));
    fill(t, 2000);
    test_cond("B+-tree checks clean", tr_check(t, why, sizeof why) == 0);
    struct tf_header *h = tf_header(&s);
    uint64_t *rootkeys = ts_at(&s, h->h_bt_root + 16);
    rootkeys[0] ^= 1;
    rootkeys[0] += 7919 * 3;
    test_cond("a moved separator is noticed",
              tr_check(t, why, sizeof why) != 0);
    printf("# %s\n", why);
    rootkeys[0] -= 7919 * 3;
    rootkeys[0] ^= 1;
    h->h_magic ^= 1;
    tr_close(t);
    test_cond("a wrong magic number is refused",
              tr_open(&s, &t) == TR_EBADFILE);
    h->h_magic ^= 1;
    h->h_format = 99;
    test_cond("another format version is refused",
              tr_open(&s, &t) == TR_EBADFILE);
    E(ts_close(&s));

    E(ts_open(&s, TS_SERIAL, ".", "co.db", 8u << 20, 0));
    E(tr_create(&s, &cc));
    E(tr_open(&s, &t));
    fill(t, 2000);
    test_cond("CO B-tree checks clean", tr_check(t, why, sizeof why) == 0);
    h = tf_header(&s);
    /* Segment records (cobtree.h): count, pad, keys[S], heap indexes[S]. */
    unsigned char *recs = ts_at(&s, h->h_co_recs);
    uint64_t S = h->h_co_seg_slots, recsz = CO_REC_BYTES(S), seg = 0;
    while (*(uint32_t *)(void *)(recs + seg * recsz) < 2)
        seg++;
    uint64_t *k0 = (uint64_t *)(void *)(recs + seg * recsz + CO_REC_KEYS);
    uint64_t save = k0[0];
    k0[0] = k0[1] - 1; /* still sorted, but the index is stale */
    test_cond("a stale vEB index node is noticed",
              tr_check(t, why, sizeof why) != 0);
    printf("# %s\n", why);
    k0[0] = k0[1] + 1;
    test_cond("keys out of order are noticed",
              tr_check(t, why, sizeof why) != 0);
    printf("# %s\n", why);
    k0[0] = save;
    uint32_t *v0 = (uint32_t *)(void *)(recs + seg * recsz + CO_REC_VIX(S));
    uint32_t vsave = v0[1];
    v0[1] = v0[0];
    test_cond("two keys on one heap entry are noticed",
              tr_check(t, why, sizeof why) != 0);
    printf("# %s\n", why);
    /* One process inserted all 2000 elements: one lane, entries 0..1999. */
    uint32_t lane = CO_VIX_LANE(v0[0]);
    struct tf_heap_lane *ln = ts_at(&s, h->h_co_lanes + lane * TF_PAGE);
    v0[1] = CO_VIX(lane, 2000);
    test_cond("a heap index past the live entries is noticed",
              tr_check(t, why, sizeof why) != 0);
    printf("# %s\n", why);
    v0[1] = vsave;
    /* Swap two elements' heap indexes: each points at the other's value. */
    v0[1] = v0[0];
    v0[0] = vsave;
    test_cond("a heap entry owned by another key is noticed",
              tr_check(t, why, sizeof why) != 0);
    printf("# %s\n", why);
    v0[0] = v0[1];
    v0[1] = vsave;
    uint64_t hsave = ln->l_hint;
    ln->l_hint = 2001;
    test_cond("a heap hint past the elements is noticed",
              tr_check(t, why, sizeof why) != 0);
    printf("# %s\n", why);
    ln->l_hint = 2000 - CO_HEAP_WINDOW - 1;
    test_cond("a heap hint too far below the elements is noticed",
              tr_check(t, why, sizeof why) != 0);
    printf("# %s\n", why);
    ln->l_hint = hsave;
    uint32_t csave = ln->l_chunks;
    ln->l_chunks = TF_HEAP_CHUNKS + 1;
    test_cond("a heap with too many chunks is noticed",
              tr_check(t, why, sizeof why) != 0);
    printf("# %s\n", why);
    ln->l_chunks = csave;
    uint64_t osave = ln->l_chunk[0];
    ln->l_chunk[0] = h->h_file_bytes - 4096;
    test_cond("a heap chunk outside the file is noticed",
              tr_check(t, why, sizeof why) != 0);
    printf("# %s\n", why);
    ln->l_chunk[0] = osave;
    test_cond("restored CO B-tree checks clean",
              tr_check(t, why, sizeof why) == 0);
    /* Two handles on one file append to the same heap lane, each with its
     * own idea of where the lane ends: each must notice the other's
     * inserts (as processes whose pids share a lane must). */
    tr_tree *t2;
    unsigned char v2[64] = {2}, got[64];
    int ok = tr_open(&s, &t2) == 0;
    for (uint64_t i = 0; i < 300 && ok; i++)
        ok = tr_insert(i % 2 ? t : t2, i * 7919 + 1, v2) == 0;
    for (uint64_t i = 0; i < 300 && ok; i++)
        ok = tr_search(i % 3 ? t2 : t, i * 7919 + 1, got) == 1 && got[0] == 2;
    for (uint64_t i = 0; i < 300 && ok; i += 2)
        ok = tr_delete(i % 4 ? t : t2, i * 7919 + 1) == 1;
    if (ok && tr_check(t, why, sizeof why) != 0) {
        printf("# %s\n", why);
        ok = 0;
    }
    test_cond("two handles appending to one heap lane in turn keep it "
              "consistent",
              ok);
    if (ok)
        tr_close(t2);
    tr_close(t);
    E(ts_close(&s));
    return test_report();
}
