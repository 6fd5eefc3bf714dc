/* test_08_serial: a randomized multi-process serializability checker.
 *
 * P processes (forked, each with its own xInit/xMmap of one file) run
 * random bank transfers between NACC accounts, audits (an update
 * transaction that first sums every account), and read-only queries
 * (xbeginQuery) that sum every account.  Each account record holds its
 * balance and the id of the transaction that wrote it last, so every read
 * names the version it saw.  Checked:
 *
 * 1. every transaction, committed or aborted, sees the total (consistent
 *    snapshots, also for FAILED transactions);
 * 2. the file holds the total at the end;
 * 3. committed transactions logged with their read and write sets (and
 *    the versions seen) form an acyclic serialization graph: WR edges
 *    (writer -> reader of a version), WW edges (version order) and RW
 *    anti-dependencies (reader of a version -> the writer that replaced
 *    it); no two committed writers replaced the same version (no lost
 *    update) and nobody read a version that no committed transaction
 *    wrote (no dirty read);
 * 4. the last version of each account in the file is the end of its
 *    version chain.
 *
 * Each process uses a different conflict policy (self-abort, oldest-wins,
 * requester-wins, polite) with backoff, under admission (XAC_WRITERS) and
 * escalation (XAC_ESCALATE): also checked, 5., that no process aborted
 * more than XAC_ESCALATE times in a row (the progress bound).  It prints
 * how many transactions it verified.  Knobs: XAC_SERIAL_SECS (default 2;
 * 0.5 under valgrind), XAC_SERIAL_PROCS (default 16; 4 under valgrind),
 * XAC_SERIAL_MIN (fail unless at least this many were verified; make
 * serial-long runs a million).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "support/testhelp.h"
#include "support/tutil.h"

#define NACC 24       /* accounts */
#define PER_PAGE 3    /* accounts per page: some false sharing */
#define NPAGES (NACC / PER_PAGE)
/* The mapping: one window of 64 pages (the accounts in its first NPAGES),
 * so that a query may map it straight from the data file when every page
 * of it reads the file's version (xac_share.c). */
#define MAP_PAGES 64
#define INIT 1000
#define MAXP 64

struct acct {
    int64_t bal;
    uint64_t ver; /* id of the last writer, 0 = initial */
};

struct rec {
    uint64_t id;    /* 0 for a query (reads only) */
    uint32_t nr, nw;
    uint32_t racct[NACC];
    uint64_t rver[NACC];
    uint32_t wacct[2];
    uint64_t wprev[2]; /* version the write replaced */
};

static struct acct *A(char *base, int i)
{
    return (struct acct *)(base + (size_t)(i / PER_PAGE) * PAGESIZE) +
           (i % PER_PAGE);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* valgrind (3.19) sometimes resumes a faulting load with a wrong register
 * after the SIGSEGV handler; under valgrind the children declare their
 * pages with setPageAccess instead of faulting them in. */
static int vg;

static void declare(char *base, int mode)
{
    int p;

    if (vg)
        for (p = 0; p < NPAGES; p++)
            setPageAccess(base + (size_t)p * PAGESIZE, mode);
}

struct child_stats {
    uint64_t commits, aborts, queries, inconsistent;
    uint64_t escalations, retries_max, escalate_after;
    uint64_t full; /* aborts with XAC_EFULL */
    uint64_t shared; /* pages queries mapped from the data file */
};

static void child(int k, double secs)
{
    char name[64];
    char *base;
    FILE *log;
    struct rec r;
    struct child_stats cs;
    uint64_t seed = 0x9e3779b97f4a7c15ULL * (uint64_t)(k + 1), seq = 0;
    double end = now() + secs;
    int kind, a, b, i, rc, policy = k % 4;
    int64_t sum = 0, x;

    memset(&cs, 0, sizeof cs);
    if (xInit("ctl", NONDURABLE) != 0)
        _exit(10);
    if (xSetPolicy(policy, 200) != 0)
        _exit(11);
    base = xMmap("bank.db", MAP_PAGES * PAGESIZE);
    if (base == MAP_FAILED)
        _exit(12);
    snprintf(name, sizeof name, "log.%d", k);
    log = fopen(name, "w");
    if (log == NULL)
        _exit(13);
    while (now() < end) {
        kind = (int)(rng_next(&seed) % 8);
        memset(&r, 0, sizeof r);
        if (kind == 0) {
            /* Read-only query: never aborts. */
            xbeginQuery();
            declare(base, READ);
            sum = 0;
            for (i = 0; i < NACC; i++) {
                sum += A(base, i)->bal;
                r.racct[r.nr] = (uint32_t)i;
                r.rver[r.nr++] = A(base, i)->ver;
            }
            rc = xendQuery();
            if (sum != (int64_t)NACC * INIT) {
                cs.inconsistent++;
                if (getenv("XAC_SERIAL_DEBUG"))
                    fprintf(stderr, "query sum %lld\n", (long long)sum);
            }
            if (rc != COMMITTED)
                _exit(14);
            cs.queries++;
            fwrite(&r, sizeof r, 1, log);
            continue;
        }
        r.id = ((uint64_t)(k + 1) << 40) | ++seq;
        a = (int)(rng_next(&seed) % NACC);
        b = (int)(rng_next(&seed) % (NACC - 1));
        if (b >= a)
            b++;
        x = (int64_t)(rng_next(&seed) % 50);
        xbegin();
        declare(base, READ_WRITE);
        if (kind == 1) {
            /* Audit: sum everything first (also when doomed to fail). */
            sum = 0;
            for (i = 0; i < NACC; i++) {
                sum += A(base, i)->bal;
                if (i != a && i != b) {
                    r.racct[r.nr] = (uint32_t)i;
                    r.rver[r.nr++] = A(base, i)->ver;
                }
            }
            if (sum != (int64_t)NACC * INIT) {
                cs.inconsistent++;
                if (getenv("XAC_SERIAL_DEBUG"))
                    fprintf(stderr, "audit sum %lld\n", (long long)sum);
            }
        }
        r.racct[r.nr] = (uint32_t)a;
        r.rver[r.nr++] = A(base, a)->ver;
        r.racct[r.nr] = (uint32_t)b;
        r.rver[r.nr++] = A(base, b)->ver;
        r.wacct[0] = (uint32_t)a;
        r.wprev[0] = A(base, a)->ver;
        r.wacct[1] = (uint32_t)b;
        r.wprev[1] = A(base, b)->ver;
        r.nw = 2;
        A(base, a)->bal -= x;
        A(base, a)->ver = r.id;
        A(base, b)->bal += x;
        A(base, b)->ver = r.id;
        rc = xend();
        if (getenv("XAC_SERIAL_DEBUG") && kind == 1 &&
            sum != (int64_t)NACC * INIT)
            fprintf(stderr, "audit -> %s\n", xStrerror(rc));
        if (rc == COMMITTED) {
            cs.commits++;
            fwrite(&r, sizeof r, 1, log);
        } else if (rc == ABORTED) {
            cs.aborts++;
        } else if (rc == XAC_EFULL) {
            /* Aborted too: a process descheduled inside a transaction
             * keeps every version since its snapshot, and the 8 pages'
             * pool holds 4,112. */
            cs.aborts++;
            cs.full++;
        } else {
            fprintf(stderr, "test_08: xend returned %s\n", xStrerror(rc));
            fflush(log);
            _exit(15);
        }
    }
    fclose(log);
    cs.escalations = tu_stats().escalations;
    cs.shared = tu_stats().pages_shared;
    cs.retries_max = tu_stats().retries_max;
    cs.escalate_after = (uint64_t)tu_stats().escalate_after;
    snprintf(name, sizeof name, "stats.%d", k);
    log = fopen(name, "w");
    if (log == NULL || fwrite(&cs, sizeof cs, 1, log) != 1)
        _exit(16);
    fclose(log);
    if (xMunmap("bank.db") != 0 || xShutdown() != 0)
        _exit(17);
    _exit(0);
}

/* ---- the serialization graph ------------------------------------------ */

struct node {
    uint64_t id;
    uint32_t first_edge, nedge, indeg;
};

static struct rec *recs;
static size_t nrecs;
static uint64_t *ids;   /* sorted ids of committed update transactions */
static size_t nids;
static uint32_t *eto;   /* edges as (from, to) pairs */
static uint32_t *efrom;
static size_t nedges, ecap;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Node index of id (0 = the initial state), or -1. */
static long node_of(uint64_t id)
{
    size_t lo = 0, hi = nids;

    if (id == 0)
        return 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < nids && ids[lo] == id ? (long)lo + 1 : -1;
}

static void edge(long from, long to)
{
    if (from == to || from < 0 || to < 0)
        return;
    if (nedges == ecap) {
        ecap = ecap ? 2 * ecap : 4096;
        efrom = realloc(efrom, ecap * sizeof *efrom);
        eto = realloc(eto, ecap * sizeof *eto);
        if (efrom == NULL || eto == NULL)
            abort();
    }
    efrom[nedges] = (uint32_t)from;
    eto[nedges++] = (uint32_t)to;
}

/* next[acct][node] = node that replaced that node's version of acct. */
static int build_and_check(int nproc, uint64_t *verified, char *why,
                           size_t whylen)
{
    char name[64];
    FILE *f;
    struct rec r;
    size_t cap = 0, i, j, nn, head, tail;
    long *next, w, v;
    uint32_t *deg, *queue, *start, *adj, *fill;
    int k;

    for (k = 0; k < nproc; k++) {
        snprintf(name, sizeof name, "log.%d", k);
        f = fopen(name, "r");
        if (f == NULL)
            return snprintf(why, whylen, "no log %d", k), 0;
        while (fread(&r, sizeof r, 1, f) == 1) {
            if (nrecs == cap) {
                cap = cap ? 2 * cap : 4096;
                recs = realloc(recs, cap * sizeof *recs);
                if (recs == NULL)
                    abort();
            }
            recs[nrecs++] = r;
        }
        fclose(f);
    }
    ids = malloc((nrecs + 1) * sizeof *ids);
    E_ALLOC(ids);
    for (i = 0; i < nrecs; i++)
        if (recs[i].id != 0)
            ids[nids++] = recs[i].id;
    qsort(ids, nids, sizeof *ids, cmp_u64);
    nn = nids + 1;
    next = malloc(NACC * nn * sizeof *next);
    E_ALLOC(next);
    for (i = 0; i < NACC * nn; i++)
        next[i] = -1;
    /* WW: version order; two committed writers of one version = lost
     * update. */
    for (i = 0; i < nrecs; i++) {
        if (recs[i].id == 0)
            continue;
        w = node_of(recs[i].id);
        for (j = 0; j < recs[i].nw; j++) {
            v = node_of(recs[i].wprev[j]);
            if (v < 0)
                return snprintf(why, whylen,
                                "txn %llx overwrote an uncommitted version",
                                (unsigned long long)recs[i].id), 0;
            if (next[recs[i].wacct[j] * nn + (size_t)v] != -1)
                return snprintf(why, whylen, "lost update on account %u",
                                recs[i].wacct[j]), 0;
            next[recs[i].wacct[j] * nn + (size_t)v] = w;
            edge(v, w);
        }
    }
    /* WR and RW edges; queries are nodes too (appended after nn). */
    for (i = 0; i < nrecs; i++) {
        long me = recs[i].id != 0 ? node_of(recs[i].id) : (long)(nn + i);
        for (j = 0; j < recs[i].nr; j++) {
            v = node_of(recs[i].rver[j]);
            if (v < 0)
                return snprintf(why, whylen, "dirty read of %llx",
                                (unsigned long long)recs[i].rver[j]), 0;
            edge(v, me);
            edge(me, next[recs[i].racct[j] * nn + (size_t)v]);
        }
    }
    /* Kahn's algorithm over nn + nrecs nodes. */
    nn += nrecs;
    deg = calloc(nn, sizeof *deg);
    start = calloc(nn + 1, sizeof *start);
    fill = calloc(nn, sizeof *fill);
    adj = malloc((nedges + 1) * sizeof *adj);
    queue = malloc(nn * sizeof *queue);
    for (i = 0; i < nedges; i++) {
        deg[eto[i]]++;
        start[efrom[i] + 1]++;
    }
    for (i = 0; i < nn; i++)
        start[i + 1] += start[i];
    for (i = 0; i < nedges; i++)
        adj[start[efrom[i]] + fill[efrom[i]]++] = eto[i];
    head = tail = 0;
    for (i = 0; i < nn; i++)
        if (deg[i] == 0)
            queue[tail++] = (uint32_t)i;
    while (head < tail) {
        uint32_t u = queue[head++];
        for (j = start[u]; j < start[u + 1]; j++)
            if (--deg[adj[j]] == 0)
                queue[tail++] = adj[j];
    }
    *verified = nrecs;
    k = tail == nn;
    if (!k)
        snprintf(why, whylen, "the serialization graph has a cycle "
                              "(%zu of %zu nodes sorted)", tail, nn);
    free(deg);
    free(start);
    free(fill);
    free(adj);
    free(queue);
    free(next);
    return k;
}

int main(void)
{
    const char *e;
    double secs = tu_valgrind() ? 0.5 : 2.0;
    int nproc = tu_valgrind() ? 4 : 16, k, st, allok = 1, bounded = 1;
    unsigned long long min = 1;
    pid_t pids[MAXP];
    char *base, name[64], why[256] = "";
    struct child_stats cs, tot;
    uint64_t verified = 0;
    int64_t sum;
    int i, chain_ok = 1;
    FILE *f;

    if ((e = getenv("XAC_SERIAL_SECS")) != NULL)
        secs = atof(e);
    if ((e = getenv("XAC_SERIAL_PROCS")) != NULL)
        nproc = atoi(e);
    if (nproc < 1 || nproc > MAXP)
        nproc = 16;
    if ((e = getenv("XAC_SERIAL_MIN")) != NULL)
        min = strtoull(e, NULL, 10);
    vg = tu_valgrind();
    tu_tmpdir();

    E(xInit("ctl", NONDURABLE));
    base = xMmap("bank.db", MAP_PAGES * PAGESIZE);
    test_cond("map the bank", base != MAP_FAILED);
    E(xbegin());
    declare(base, READ_WRITE);
    for (i = 0; i < NACC; i++) {
        A(base, i)->bal = INIT;
        A(base, i)->ver = 0;
    }
    test_cond("open the accounts", xend() == COMMITTED);
    E(xMunmap("bank.db"));
    E(xShutdown());

    fflush(NULL);
    for (k = 0; k < nproc; k++) {
        pids[k] = fork();
        if (pids[k] == 0)
            child(k, secs);
    }
    for (k = 0; k < nproc; k++) {
        waitpid(pids[k], &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            printf("# process %d: status %#x\n", k, st);
            allok = 0;
        }
    }
    test_cond("every process finished cleanly", allok);

    memset(&tot, 0, sizeof tot);
    for (k = 0; k < nproc; k++) {
        snprintf(name, sizeof name, "stats.%d", k);
        f = fopen(name, "r");
        if (f != NULL && fread(&cs, sizeof cs, 1, f) == 1) {
            tot.commits += cs.commits;
            tot.aborts += cs.aborts;
            tot.queries += cs.queries;
            tot.inconsistent += cs.inconsistent;
            tot.full += cs.full;
            tot.escalations += cs.escalations;
            tot.shared += cs.shared;
            if (cs.retries_max > tot.retries_max)
                tot.retries_max = cs.retries_max;
            bounded &= cs.escalate_after == 0 ||
                       cs.retries_max <= cs.escalate_after;
            tot.escalate_after = cs.escalate_after;
        }
        if (f != NULL)
            fclose(f);
    }
    printf("# %llu commits, %llu aborts, %llu queries, %llu inconsistent\n",
           (unsigned long long)tot.commits, (unsigned long long)tot.aborts,
           (unsigned long long)tot.queries,
           (unsigned long long)tot.inconsistent);
    test_cond("no transaction (committed or aborted) saw an inconsistent "
              "snapshot",
              tot.inconsistent == 0);
    printf("# %llu escalations; at most %llu aborts in a row (XAC_ESCALATE "
           "%llu); %llu aborts by a full pool\n",
           (unsigned long long)tot.escalations,
           (unsigned long long)tot.retries_max,
           (unsigned long long)tot.escalate_after,
           (unsigned long long)tot.full);
    test_cond("no process aborted more than XAC_ESCALATE times in a row",
              bounded);
    printf("# %llu pages queries mapped from the data file\n",
           (unsigned long long)tot.shared);

    E(xInit("ctl", NONDURABLE));
    base = xMmap("bank.db", MAP_PAGES * PAGESIZE);
    E(xbeginQuery());
    declare(base, READ);
    sum = 0;
    for (i = 0; i < NACC; i++)
        sum += A(base, i)->bal;
    test_cond("query after the run commits", xendQuery() == COMMITTED);
    test_cond("the money is all there", sum == (int64_t)NACC * INIT);

    k = build_and_check(nproc, &verified, why, sizeof why);
    if (!k)
        printf("# %s\n", why);
    test_cond("the serialization graph is acyclic (no lost update, no "
              "dirty read)",
              k);
    /* The file's last versions end the version chains. */
    E(xbeginQuery());
    declare(base, READ);
    for (i = 0; i < NACC; i++) {
        uint64_t ver = A(base, i)->ver;
        long v = node_of(ver);
        size_t j, nn = nids + 1;
        if (v < 0) {
            chain_ok = 0;
            continue;
        }
        for (j = 0; j < nrecs; j++) {
            size_t m;
            for (m = 0; m < recs[j].nw; m++)
                if (recs[j].id != 0 && recs[j].wacct[m] == (uint32_t)i &&
                    recs[j].wprev[m] == ver)
                    chain_ok = 0; /* someone replaced the final version */
        }
        (void)nn;
    }
    test_cond("the final query commits", xendQuery() == COMMITTED);
    test_cond("the file holds the last version of every account", chain_ok);
    E(xMunmap("bank.db"));
    E(xShutdown());
    printf("# serializability: %llu transactions verified (%llu committed "
           "updates, %llu queries, %llu aborted) on %d processes in %.1f s\n",
           (unsigned long long)verified, (unsigned long long)tot.commits,
           (unsigned long long)tot.queries, (unsigned long long)tot.aborts,
           nproc, secs);
    test_cond("it verified transactions", verified > 0 && tot.commits > 0);
    if (min > 1)
        test_cond("it verified at least XAC_SERIAL_MIN transactions",
                  verified >= min);
    free(recs);
    free(ids);
    free(efrom);
    free(eto);
    return test_report();
}
