/* test_21_tree_diff: randomized differential test of every tree, serial and
 * transactional, against a sorted-array reference, with the invariant
 * checker after each run and after reopening the file. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "support/testhelp.h"
#include "support/tutil.h"
#include "tree.h"
#include "workload.h"

#define MAXV 600
#define UNIVERSE 1500 /* small, so replacements and deletes hit */

struct ref {
    uint64_t key, ver;
};

static struct ref ref[UNIVERSE];
static size_t nref;

static size_t ref_lower(uint64_t key)
{
    size_t lo = 0, hi = nref;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ref[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Put a key the reference does not hold at its place i (ref_lower). */
static void ref_add_at(size_t i, uint64_t key, uint64_t ver)
{
    memmove(&ref[i + 1], &ref[i], (nref - i) * sizeof *ref);
    ref[i] = (struct ref){key, ver};
    nref++;
}

static void ref_drop_at(size_t i)
{
    memmove(&ref[i], &ref[i + 1], (nref - i - 1) * sizeof *ref);
    nref--;
}

static void value_of(uint64_t key, uint64_t ver, unsigned char *v, size_t n)
{
    xb_workload_value(key * 31 + ver, v, n);
}

/* Keys spread over the whole 64-bit range, including 0 and the maximum. */
static uint64_t key_of(uint64_t i)
{
    if (i == 0)
        return 0;
    if (i == 1)
        return UINT64_MAX;
    return i * 0x9e3779b97f4a7c15ull;
}

struct scan {
    size_t at;
    size_t vbytes;
    int bad;
};

static int visit(void *arg, uint64_t key, const void *val)
{
    struct scan *sc = arg;
    unsigned char want[MAXV];
    if (sc->at >= nref || ref[sc->at].key != key) {
        sc->bad = 1;
        return 1;
    }
    value_of(key, ref[sc->at].ver, want, sc->vbytes);
    if (memcmp(want, val, sc->vbytes) != 0)
        sc->bad = 1;
    sc->at++;
    return 0;
}

/* Run ops random operations; returns the number of mismatches. */
static long run_ops(tr_tree *t, size_t vbytes, int ops, uint64_t seed)
{
    struct xb_rng rng;
    unsigned char v[MAXV], got[MAXV];
    long bad = 0;
    xb_rng_seed(&rng, seed);
    nref = 0;
    for (int op = 0; op < ops; op++) {
        uint64_t r = xb_rng_below(&rng, 100);
        uint64_t key = key_of(xb_rng_below(&rng, UNIVERSE));
        size_t i = ref_lower(key);
        int present = i < nref && ref[i].key == key;
        if (r < 55) { /* insert or replace */
            uint64_t ver = (uint64_t)op;
            value_of(key, ver, v, vbytes);
            int rc = tr_insert(t, key, v);
            if (rc != present)
                bad++;
            if (present)
                ref[i].ver = ver;
            else
                ref_add_at(i, key, ver);
        } else if (r < 75) { /* delete */
            if (tr_delete(t, key) != present)
                bad++;
            if (present)
                ref_drop_at(i);
        } else if (r < 95) { /* search */
            int rc = tr_search(t, key, got);
            value_of(key, present ? ref[i].ver : 0, v, vbytes);
            if (rc != present || (present && memcmp(v, got, vbytes) != 0))
                bad++;
        } else { /* range query of a random interval */
            uint64_t a = key, b = key_of(xb_rng_below(&rng, UNIVERSE));
            if (a > b) {
                uint64_t x = a;
                a = b;
                b = x;
            }
            struct scan sc = {ref_lower(a), vbytes, 0};
            size_t want = ref_lower(b) - sc.at;
            want += ref_lower(b) < nref && ref[ref_lower(b)].key == b;
            long long n = tr_range(t, a, b, visit, &sc);
            if (sc.bad || n != (long long)want)
                bad++;
        }
    }
    return bad;
}

/* Everything in the tree, in order, equals the reference. */
static int full_scan_ok(tr_tree *t, size_t vbytes)
{
    struct scan sc = {0, vbytes, 0};
    long long n = tr_range(t, 0, UINT64_MAX, visit, &sc);
    return !sc.bad && n == (long long)nref;
}

static void one(enum ts_kind sk, int advisory, enum tr_kind kind,
                uint32_t block, uint32_t vbytes, int ops, int phase_grow)
{
    struct ts_store s;
    struct tr_config cfg = {kind, block, vbytes};
    tr_tree *t;
    char name[64], desc[200], why[256] = "";
    snprintf(name, sizeof name, "t-%d-%d-%d-%u-%u.db", sk, advisory, kind,
             block, vbytes);
    snprintf(desc, sizeof desc, "%s %s%s block %u value %u",
             sk == TS_XAC ? "transactional" : "serial", tr_kind_name(kind),
             advisory ? " (setPageAccess)" : "", block, vbytes);
    size_t len = tr_file_bytes(&cfg, UNIVERSE);
    E(ts_open(&s, sk, ".", name, len, advisory));
    E(tr_create(&s, &cfg));
    E(tr_open(&s, &t));
    long bad = run_ops(t, vbytes, ops, 7 + (uint64_t)kind * 13 + block + vbytes);
    char d2[300];
    snprintf(d2, sizeof d2, "%s: %d random ops agree with the reference",
             desc, ops);
    test_cond(d2, bad == 0);
    int chk = tr_check(t, why, sizeof why);
    if (chk != 0)
        printf("# %s\n", why);
    snprintf(d2, sizeof d2, "%s: invariants hold afterwards", desc);
    test_cond(d2, chk == 0);
    if (phase_grow) {
        /* Insert-only phase: growth without deletes, strict fill bounds
         * for the B+-tree (on a fresh tree). */
        tr_close(t);
        E(ts_close(&s));
        snprintf(name + strlen(name), sizeof name - strlen(name), "2");
        E(ts_open(&s, sk, ".", name, len, advisory));
        E(tr_create(&s, &cfg));
        E(tr_open(&s, &t));
        unsigned char v[MAXV];
        nref = 0;
        int ok = 1;
        unsigned long long f0 = sk == TS_XAC ? tu_stats().faults : 0;
        for (uint64_t i = 0; i < UNIVERSE; i++) {
            uint64_t key = phase_grow == 2 ? i * 1000 : key_of(i);
            value_of(key, 0, v, vbytes);
            if (tr_insert(t, key, v) != 0)
                ok = 0;
            ref_add_at(ref_lower(key), key, 0);
        }
        if (sk == TS_XAC && advisory && kind == TR_BTREE && block == 4096) {
            /* One page per node: the descent, the leaf, the split's new
             * node, its parent and the allocator record are all declared,
             * so only the rare root split (the header) may fault. */
            unsigned long long nf = tu_stats().faults - f0;
            printf("# %llu faults in %llu advised inserts\n", nf,
                   (unsigned long long)UNIVERSE);
            snprintf(d2, sizeof d2, "%s: advised inserts, splits included, "
                     "take under one fault per 50 inserts", desc);
            test_cond(d2, nf * 50 < UNIVERSE);
        }
        chk = tr_check(t, why, sizeof why);
        if (chk != 0)
            printf("# %s\n", why);
        snprintf(d2, sizeof d2, "%s: %s inserts keep the invariants", desc,
                 phase_grow == 2 ? "sorted" : "random");
        test_cond(d2, ok && chk == 0 && full_scan_ok(t, vbytes));
        /* Drain in a random order down to a tenth (the CO B-tree's heap
         * gives back chunks and its array halves), checking as it goes,
         * then grow again. */
        struct xb_rng rng;
        xb_rng_seed(&rng, 99 + (uint64_t)phase_grow);
        ok = 1;
        for (int d = 0; nref > UNIVERSE / 10 && ok; d++) {
            size_t at = (size_t)xb_rng_below(&rng, nref);
            ok = tr_delete(t, ref[at].key) == 1;
            ref_drop_at(at);
            if (d % 97 == 0 && tr_check(t, why, sizeof why) != 0) {
                printf("# %s\n", why);
                ok = 0;
            }
        }
        for (uint64_t i = 0; i < UNIVERSE / 2 && ok; i++) {
            uint64_t key = key_of(i) + 1; /* odd: not among the others */
            value_of(key, 1, v, vbytes);
            ok = tr_insert(t, key, v) == 0;
            ref_add_at(ref_lower(key), key, 1);
        }
        chk = tr_check(t, why, sizeof why);
        if (chk != 0)
            printf("# %s\n", why);
        snprintf(d2, sizeof d2, "%s: random deletes to a tenth, then "
                 "inserts, keep the invariants", desc);
        test_cond(d2, ok && chk == 0 && full_scan_ok(t, vbytes));
    }
    tr_close(t);
    E(ts_close(&s));
    /* Reopen: the file alone holds the tree. */
    E(ts_open(&s, sk, ".", name, len, advisory));
    int rc = tr_open(&s, &t);
    int ok = rc == 0 && full_scan_ok(t, vbytes) &&
             tr_check(t, why, sizeof why) == 0;
    snprintf(d2, sizeof d2, "%s: reopened file holds the same tree", desc);
    test_cond(d2, ok);
    if (rc == 0)
        tr_close(t);
    E(ts_close(&s));
}

int main(void)
{
    int ops = tu_valgrind() ? 800 : 4000;
    tu_tmpdir();
    for (int v = 0; v < 2; v++) {
        enum ts_kind sk = v ? TS_XAC : TS_SERIAL;
        one(sk, 0, TR_BTREE, 4096, 512, ops, 1);
        one(sk, 0, TR_BTREE, 4096, 24, ops, 2);
        one(sk, 0, TR_BTREE, 16384, 512, ops, 2);
        one(sk, 0, TR_COBTREE, 0, 512, ops, 1);
        one(sk, 0, TR_COBTREE, 0, 24, ops, 2);
    }
    one(TS_XAC, 1, TR_BTREE, 4096, 512, ops, 1);
    one(TS_XAC, 1, TR_BTREE, 65536, 100, ops, 2);
    return test_report();
}
