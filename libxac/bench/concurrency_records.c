/* concurrency_records: the multi-process record database of seeds 004
 * (Stevens and Rago, APUE 2nd ed., section 20.9), with four kinds of
 * concurrency control.
 *
 * The parent creates an empty store, forks --procs children and waits.
 * Each child works only on records of its own (APUE's test program):
 *   1. store --nrec new records;
 *   2. fetch each of them;
 *   3. 5*nrec times: fetch a random own record; every 37th time delete a
 *      random one, every 11th time store a new one and fetch it back, every
 *      17th time replace a random one with new data;
 *   4. delete every record it still has, each delete followed by 10 random
 *      fetches.
 * That is about ten times more fetches than stores, and than deletes.
 *
 * The store is one file: a header (free-list head and 137 hash-chain heads,
 * APUE's default hash size) and fixed 128-byte record slots, each with a key,
 * a version, a length and a checksum.  Variants (result param "variant"):
 *   nolock  no locking at all (sut "os")
 *   coarse  fcntl write lock on the whole file for a store or delete, read
 *           lock for a fetch (APUE section 20.6) (sut "os")
 *   fine    fcntl byte-range locks: one byte per hash chain (read lock to
 *           fetch, write lock to change it) and one for the free list
 *           (APUE section 20.8) (sut "os")
 *   libxac  the same store in an xMmap()ped file, every store, fetch and
 *           delete one transaction, retried when it aborts (sut "libxac");
 *           --durability durable forces every commit to LIBXAC's log
 *           (xInit(DURABLE)), nondurable (the default) does not
 * The three os variants access the file with pread/pwrite as APUE does;
 * libxac reads and writes the segment in memory.
 *
 * Every child knows what each of its records must contain, so every fetch
 * is checked; without locking, races show up as errors (see
 * docs/benchmarks-records.md): a record missing or still present after its
 * delete, a record whose checksum, key, version or data is wrong, a chain
 * pointer out of range or a cycle, the free list running dry.  After the
 * children exit the parent checks the whole file: all chains empty, every
 * slot on the free list exactly once.  Locking variants must report 0.
 *
 * Results: suite "concurrency", benchmark "records", params {variant, procs,
 * nrec} (and durability for the libxac variant), metrics wall_time,
 * user_time, sys_time (s; the children's totals from wait4, wall from the
 * start signal until the last child is reaped) and errors (count); one
 * sample per repetition, each on a fresh store.  If xInit() returns
 * XAC_EBUSY (every process slot of the control file taken) the libxac
 * variant is reported unsupported on stderr and has no results; that is
 * not a failure.
 */
#include "clock.h"
#include "options.h"
#include "result.h"
#include "scratch.h"
#include "workload.h"
#include "xac.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROG "concurrency_records"
#define RS_MAGIC 0x63657278u /* "xrec" little-endian */
#define RS_FORMAT 1u
#define RS_NHASH 137u
#define RS_SLOT 128u
#define RS_SLOT_BASE 4096u
#define RS_DATA_MAX (RS_SLOT - 24u)
#define RS_DATA_MIN 16u
#define MAX_PROCS 64

enum variant { V_NOLOCK, V_COARSE, V_FINE, V_LIBXAC, NVARIANTS };
static const char *const variant_names[] = {"nolock", "coarse", "fine",
                                            "libxac", NULL};

/* ---- the store file ---------------------------------------------------- */

struct rs_head {
    uint32_t rh_magic, rh_format, rh_nslots, rh_nhash;
    uint32_t rh_free; /* first free slot, 1-based; 0 = none */
    uint32_t rh_pad[3];
    uint32_t rh_bucket[RS_NHASH]; /* first slot of each chain; 0 = none */
};

struct rs_slot {
    uint32_t sl_next; /* next slot in the chain or free list; 0 = none */
    uint32_t sl_len;  /* bytes of sl_data in use */
    uint64_t sl_key;  /* 0 in a free slot */
    uint32_t sl_sum;  /* rs_sum() over key, version, length and data */
    uint32_t sl_ver;
    unsigned char sl_data[RS_DATA_MAX];
};

_Static_assert(sizeof(struct rs_slot) == RS_SLOT, "slot layout");
_Static_assert(sizeof(struct rs_head) <= RS_SLOT_BASE, "header layout");

#define OFF_FREE offsetof(struct rs_head, rh_free)
#define OFF_BUCKET(b) (offsetof(struct rs_head, rh_bucket) + 4u * (b))
#define OFF_SLOT(i) ((off_t)RS_SLOT_BASE + (off_t)((i)-1) * RS_SLOT)

/* Errors a child or the final check can find. */
struct rs_errs {
    long long missing;  /* own record not found, or not found to delete */
    long long stale;    /* record found after it was deleted, or twice */
    long long corrupt;  /* checksum, key, version or data wrong */
    long long index;    /* chain or free-list pointer out of range, cycle */
    long long full;     /* free list empty (slots were lost) */
};

static long long errs_total(const struct rs_errs *e)
{
    return e->missing + e->stale + e->corrupt + e->index + e->full;
}

/* What a child sends its parent when it is done (one atomic pipe write). */
struct child_report {
    struct rs_errs errs;
    long long fetches, stores, deletes, aborts;
};

struct rs {
    int fd;              /* os variants: pread/pwrite on it */
    unsigned char *base; /* libxac: the segment */
    uint32_t nslots;
    enum variant v;
};

static void child_die(const char *what)
{
    fprintf(stderr, "%s: child %d: %s: %s\n", PROG, (int)getpid(), what,
            strerror(errno));
    _exit(1);
}

static void rs_get(struct rs *s, off_t off, void *p, size_t n)
{
    if (s->base != NULL) {
        memcpy(p, s->base + off, n);
        return;
    }
    if (pread(s->fd, p, n, off) != (ssize_t)n)
        child_die("pread of the store failed");
}

static void rs_put(struct rs *s, off_t off, const void *p, size_t n)
{
    if (s->base != NULL) {
        memcpy(s->base + off, p, n);
        return;
    }
    if (pwrite(s->fd, p, n, off) != (ssize_t)n)
        child_die("pwrite to the store failed");
}

static uint32_t get32(struct rs *s, off_t off)
{
    uint32_t v;
    rs_get(s, off, &v, sizeof v);
    return v;
}

static void put32(struct rs *s, off_t off, uint32_t v)
{
    rs_put(s, off, &v, sizeof v);
}

/* fcntl lock (type F_RDLCK/F_WRLCK/F_UNLCK) on [off, off+len); len 0 = to
 * the end of the file.  Only the coarse and fine variants lock. */
static void lk(struct rs *s, short type, off_t off, off_t len)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = off,
                       .l_len = len};
    while (fcntl(s->fd, F_SETLKW, &fl) != 0)
        if (errno != EINTR && errno != EDEADLK)
            child_die("fcntl lock failed");
}

static void lock_chain(struct rs *s, uint32_t b, short type)
{
    if (s->v == V_COARSE)
        lk(s, type, 0, 0);
    else if (s->v == V_FINE)
        lk(s, type, (off_t)OFF_BUCKET(b), 1);
}

static void unlock_chain(struct rs *s, uint32_t b)
{
    lock_chain(s, b, F_UNLCK);
}

/* The free list has a lock of its own only in the fine variant; the coarse
 * variant already holds the whole file. */
static void lock_free(struct rs *s, short type)
{
    if (s->v == V_FINE)
        lk(s, type, (off_t)OFF_FREE, 1);
}

static uint32_t rs_hash(uint64_t key)
{
    uint64_t st = key;
    return (uint32_t)(xb_splitmix64(&st) % RS_NHASH);
}

static uint32_t rs_sum(uint64_t key, uint32_t ver, uint32_t len,
                       const unsigned char *data)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    unsigned char hdr[16];
    memcpy(hdr, &key, 8);
    memcpy(hdr + 8, &ver, 4);
    memcpy(hdr + 12, &len, 4);
    for (size_t i = 0; i < sizeof hdr; i++)
        h = (h ^ hdr[i]) * 16777619u;
    for (uint32_t i = 0; i < len && i < RS_DATA_MAX; i++)
        h = (h ^ data[i]) * 16777619u;
    return h;
}

/* The contents of version ver of key: its length and bytes. */
static void rs_make(uint64_t key, uint32_t ver, struct rs_slot *sl)
{
    uint64_t st = key * 0x9e3779b97f4a7c15u ^ ((uint64_t)ver << 17);
    uint64_t w = xb_splitmix64(&st);
    memset(sl, 0, sizeof *sl);
    sl->sl_key = key;
    sl->sl_ver = ver;
    sl->sl_len = RS_DATA_MIN + (uint32_t)(w % (RS_DATA_MAX - RS_DATA_MIN + 1));
    for (uint32_t i = 0; i < sl->sl_len; i += 8) {
        w = xb_splitmix64(&st);
        memcpy(sl->sl_data + i, &w,
               sl->sl_len - i < 8 ? sl->sl_len - i : 8);
    }
    sl->sl_sum = rs_sum(key, ver, sl->sl_len, sl->sl_data);
}

/* Walk chain b for key.  Returns 1 with *cur (and its contents in *sl) and
 * *prev (0: the chain head) if found, 0 if not, -1 if a pointer is out of
 * range or the chain is longer than the store (a cycle). */
static int rs_find(struct rs *s, uint32_t b, uint64_t key, uint32_t *prev,
                   uint32_t *cur, struct rs_slot *sl)
{
    uint32_t p = 0, c = get32(s, (off_t)OFF_BUCKET(b));
    for (uint32_t steps = 0; c != 0; steps++) {
        if (c > s->nslots || steps > s->nslots)
            return -1;
        rs_get(s, OFF_SLOT(c), sl, sizeof *sl);
        if (sl->sl_key == key) {
            *prev = p;
            *cur = c;
            return 1;
        }
        p = c;
        c = sl->sl_next;
    }
    return 0;
}

/* Fetch: 1 found (contents in *sl), 0 not found, -1 index error. */
static int rs_fetch(struct rs *s, uint64_t key, struct rs_slot *sl)
{
    uint32_t b = rs_hash(key), prev, cur;
    lock_chain(s, b, F_RDLCK);
    int rc = rs_find(s, b, key, &prev, &cur, sl);
    unlock_chain(s, b);
    return rc;
}

/* Store a new record: 0 done, 1 key already there, -1 index error, -2 no
 * free slot. */
static int rs_insert(struct rs *s, const struct rs_slot *rec)
{
    uint32_t b = rs_hash(rec->sl_key), prev, cur;
    struct rs_slot sl;
    int rc;
    lock_chain(s, b, F_WRLCK);
    rc = rs_find(s, b, rec->sl_key, &prev, &cur, &sl);
    if (rc != 0)
        goto out;
    lock_free(s, F_WRLCK);
    uint32_t f = get32(s, (off_t)OFF_FREE);
    if (f != 0 && f <= s->nslots)
        put32(s, (off_t)OFF_FREE,
              get32(s, OFF_SLOT(f) + (off_t)offsetof(struct rs_slot, sl_next)));
    lock_free(s, F_UNLCK);
    if (f == 0 || f > s->nslots) {
        rc = f == 0 ? -2 : -1;
        goto out;
    }
    sl = *rec;
    sl.sl_next = get32(s, (off_t)OFF_BUCKET(b));
    rs_put(s, OFF_SLOT(f), &sl, sizeof sl);
    put32(s, (off_t)OFF_BUCKET(b), f);
out:
    unlock_chain(s, b);
    return rc;
}

/* Replace an existing record in place: 0 done, 1 not found, -1 index. */
static int rs_replace(struct rs *s, const struct rs_slot *rec)
{
    uint32_t b = rs_hash(rec->sl_key), prev, cur;
    struct rs_slot sl;
    lock_chain(s, b, F_WRLCK);
    int rc = rs_find(s, b, rec->sl_key, &prev, &cur, &sl);
    if (rc == 1) {
        struct rs_slot n = *rec;
        n.sl_next = sl.sl_next;
        rs_put(s, OFF_SLOT(cur), &n, sizeof n);
    }
    unlock_chain(s, b);
    return rc == 1 ? 0 : rc == 0 ? 1 : -1;
}

/* Delete: 0 done, 1 not found, -1 index error. */
static int rs_delete(struct rs *s, uint64_t key)
{
    uint32_t b = rs_hash(key), prev, cur;
    struct rs_slot sl;
    lock_chain(s, b, F_WRLCK);
    int rc = rs_find(s, b, key, &prev, &cur, &sl);
    if (rc == 1) {
        if (prev == 0)
            put32(s, (off_t)OFF_BUCKET(b), sl.sl_next);
        else
            put32(s, OFF_SLOT(prev) + (off_t)offsetof(struct rs_slot, sl_next),
                  sl.sl_next);
        struct rs_slot empty;
        memset(&empty, 0, sizeof empty);
        lock_free(s, F_WRLCK);
        empty.sl_next = get32(s, (off_t)OFF_FREE);
        rs_put(s, OFF_SLOT(cur), &empty, offsetof(struct rs_slot, sl_data));
        put32(s, (off_t)OFF_FREE, cur);
        lock_free(s, F_UNLCK);
    }
    unlock_chain(s, b);
    return rc == 1 ? 0 : rc == 0 ? 1 : -1;
}

/* ---- one child --------------------------------------------------------- */

enum op { OP_FETCH, OP_INSERT, OP_REPLACE, OP_DELETE };

struct child {
    struct rs s;
    struct xb_rng rng;
    uint64_t base_key;
    uint32_t nkeys, maxkeys;
    uint32_t *ver;        /* current version of key i; 0 = absent */
    struct child_report rep;
};

/* Run one operation; for libxac as a transaction, retried until it
 * commits.  Returns the operation's result; *sl gets a fetched record. */
static int run_op(struct child *c, enum op op, const struct rs_slot *rec,
                  uint64_t key, struct rs_slot *sl)
{
    int rc = 0;
    for (unsigned attempt = 0;; attempt++) {
        if (c->s.v == V_LIBXAC) {
            int b = xbegin();
            if (b != 0) {
                fprintf(stderr, "%s: xbegin: %s\n", PROG, xStrerror(b));
                _exit(1);
            }
        }
        switch (op) {
        case OP_FETCH:
            rc = rs_fetch(&c->s, key, sl);
            break;
        case OP_INSERT:
            rc = rs_insert(&c->s, rec);
            break;
        case OP_REPLACE:
            rc = rs_replace(&c->s, rec);
            break;
        case OP_DELETE:
            rc = rs_delete(&c->s, key);
            break;
        }
        if (c->s.v != V_LIBXAC)
            return rc;
        int e = xend();
        if (e == COMMITTED)
            return rc;
        if (e != ABORTED) {
            fprintf(stderr, "%s: xend: %s\n", PROG, xStrerror(e));
            _exit(1);
        }
        c->rep.aborts++;
        /* randomized exponential backoff, at most about 1 ms */
        unsigned shift = attempt < 10 ? attempt : 10;
        struct timespec ts = {
            0, (long)(xb_rng_below(&c->rng, (1u << shift)) * 1000)};
        if (ts.tv_nsec > 0)
            nanosleep(&ts, NULL);
    }
}

static void check_fetch(struct child *c, uint32_t i)
{
    uint64_t key = c->base_key + i;
    struct rs_slot sl, want;
    c->rep.fetches++;
    int rc = run_op(c, OP_FETCH, NULL, key, &sl);
    if (rc < 0) {
        c->rep.errs.index++;
    } else if (c->ver[i] == 0) {
        if (rc == 1)
            c->rep.errs.stale++;
    } else if (rc == 0) {
        c->rep.errs.missing++;
    } else {
        rs_make(key, c->ver[i], &want);
        if (sl.sl_len > RS_DATA_MAX ||
            sl.sl_sum != rs_sum(sl.sl_key, sl.sl_ver, sl.sl_len, sl.sl_data) ||
            sl.sl_ver != want.sl_ver || sl.sl_len != want.sl_len ||
            memcmp(sl.sl_data, want.sl_data, want.sl_len) != 0)
            c->rep.errs.corrupt++;
    }
}

static void do_insert(struct child *c)
{
    if (c->nkeys >= c->maxkeys)
        return;
    uint32_t i = c->nkeys++;
    struct rs_slot rec;
    rs_make(c->base_key + i, 1, &rec);
    c->rep.stores++;
    int rc = run_op(c, OP_INSERT, &rec, 0, NULL);
    if (rc == 0 || rc == 1) {
        c->ver[i] = 1;
        if (rc == 1)
            c->rep.errs.stale++;
    } else if (rc == -2) {
        c->rep.errs.full++;
    } else {
        c->rep.errs.index++;
    }
}

static void do_replace(struct child *c, uint32_t i)
{
    struct rs_slot rec;
    uint32_t nv = c->ver[i] == 0 ? 0 : c->ver[i] + 1;
    rs_make(c->base_key + i, nv == 0 ? 1 : nv, &rec);
    c->rep.stores++;
    int rc = run_op(c, OP_REPLACE, &rec, 0, NULL);
    if (rc < 0)
        c->rep.errs.index++;
    else if (rc == 0 && nv == 0)
        c->rep.errs.stale++;
    else if (rc == 1 && nv != 0)
        c->rep.errs.missing++;
    if (rc == 0 && nv != 0)
        c->ver[i] = nv;
}

static void do_delete(struct child *c, uint32_t i)
{
    c->rep.deletes++;
    int rc = run_op(c, OP_DELETE, NULL, c->base_key + i, NULL);
    if (rc < 0)
        c->rep.errs.index++;
    else if (rc == 0 && c->ver[i] == 0)
        c->rep.errs.stale++;
    else if (rc == 1 && c->ver[i] != 0)
        c->rep.errs.missing++;
    c->ver[i] = 0;
}

static void child_workload(struct child *c, uint32_t nrec)
{
    uint32_t i;
    for (i = 0; i < nrec; i++)
        do_insert(c);
    for (i = 0; i < nrec; i++)
        check_fetch(c, i);
    for (i = 0; i < 5 * nrec; i++) {
        check_fetch(c, (uint32_t)xb_rng_below(&c->rng, c->nkeys));
        if (i % 37 == 0)
            do_delete(c, (uint32_t)xb_rng_below(&c->rng, c->nkeys));
        if (i % 11 == 0) {
            do_insert(c);
            check_fetch(c, c->nkeys - 1);
        }
        if (i % 17 == 0)
            do_replace(c, (uint32_t)xb_rng_below(&c->rng, c->nkeys));
    }
    for (i = 0; i < c->nkeys; i++) {
        if (c->ver[i] == 0)
            continue;
        do_delete(c, i);
        for (int j = 0; j < 10; j++)
            check_fetch(c, (uint32_t)xb_rng_below(&c->rng, c->nkeys));
    }
}

static uint32_t keys_per_child(uint32_t nrec)
{
    return nrec + (5 * nrec + 10) / 11 + 1;
}

struct run {
    enum variant v;
    const char *path, *ctl;
    size_t len;
    uint32_t nslots, nrec;
    int procs;
    int xflags; /* xInit flags of the libxac variant */
};

/* Child k: open the store, say so on ready_fd ('k' ready, 'b' LIBXAC
 * busy, 'e' failed), wait for the parent's go byte, work, report. */
static void child_main(const struct run *run, int k, int ready_fd, int go_fd,
                       int res_fd)
{
    struct child c;
    memset(&c, 0, sizeof c);
    c.s.v = run->v;
    c.s.nslots = run->nslots;
    c.s.fd = -1;
    char status = 'k';
    if (run->v == V_LIBXAC) {
        int rc = xInit(run->ctl, run->xflags);
        if (rc != 0) {
            status = rc == XAC_EBUSY ? 'b' : 'e';
            if (status == 'e')
                fprintf(stderr, "%s: xInit: %s\n", PROG, xStrerror(rc));
        } else {
            /* Speedups compare 1 and P processes under one mechanism:
             * the thesis's, where every transaction takes its pages
             * afresh (a process alone would keep them, xSetKeepPages). */
            xSetKeepPages(0);
            void *m = xMmap(run->path, run->len);
            if (m == MAP_FAILED) {
                fprintf(stderr, "%s: xMmap: %s\n", PROG, strerror(errno));
                status = 'e';
            } else {
                c.s.base = m;
            }
        }
    } else {
        c.s.fd = open(run->path, O_RDWR);
        if (c.s.fd < 0) {
            fprintf(stderr, "%s: cannot open the store: %s\n", PROG,
                    strerror(errno));
            status = 'e';
        }
    }
    c.maxkeys = keys_per_child(run->nrec);
    c.ver = calloc(c.maxkeys, sizeof *c.ver);
    if (c.ver == NULL && status == 'k')
        status = 'e';
    c.base_key = ((uint64_t)(k + 1) << 32);
    xb_rng_seed(&c.rng, XB_WORKLOAD_SEED ^ ((uint64_t)k * 0x1000193u));
    char go = 'q';
    if (write(ready_fd, &status, 1) != 1 || read(go_fd, &go, 1) != 1)
        go = 'q';
    if (go == 'g' && status == 'k') {
        child_workload(&c, run->nrec);
        if (write(res_fd, &c.rep, sizeof c.rep) != (ssize_t)sizeof c.rep)
            child_die("cannot report to the parent");
    }
    if (c.s.base != NULL)
        xMunmap(run->path);
    if (run->v == V_LIBXAC && status != 'b' && status != 'e')
        xShutdown();
    free(c.ver);
    _exit(status == 'e' ? 1 : 0);
}

/* ---- the parent -------------------------------------------------------- */

static void create_store(const struct run *run)
{
    unsigned char *buf = calloc(1, run->len);
    if (buf == NULL)
        xb_die_errno("cannot allocate the store image");
    struct rs_head *h = (struct rs_head *)buf;
    h->rh_magic = RS_MAGIC;
    h->rh_format = RS_FORMAT;
    h->rh_nslots = run->nslots;
    h->rh_nhash = RS_NHASH;
    h->rh_free = 1;
    for (uint32_t i = 1; i <= run->nslots; i++) {
        struct rs_slot *sl = (struct rs_slot *)(buf + OFF_SLOT(i));
        sl->sl_next = i < run->nslots ? i + 1 : 0;
    }
    int fd = open(run->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        xb_die_errno("cannot create the store");
    size_t done = 0;
    while (done < run->len) {
        ssize_t n = write(fd, buf + done, run->len - done);
        if (n <= 0)
            xb_die_errno("cannot write the store");
        done += (size_t)n;
    }
    if (close(fd) != 0)
        xb_die_errno("cannot close the store");
    free(buf);
}

/* After the children: every chain empty, every slot on the free list once.
 * Returns the number of inconsistencies. */
static long long final_check(const struct run *run)
{
    struct rs s = {.fd = open(run->path, O_RDONLY), .nslots = run->nslots,
                   .v = V_NOLOCK};
    if (s.fd < 0)
        xb_die_errno("cannot reopen the store");
    unsigned char *seen = calloc((size_t)run->nslots + 1, 1);
    if (seen == NULL)
        xb_die_errno("calloc");
    long long bad = 0;
    struct rs_slot sl;
    for (uint32_t b = 0; b <= RS_NHASH; b++) {
        off_t head = b < RS_NHASH ? (off_t)OFF_BUCKET(b) : (off_t)OFF_FREE;
        uint32_t c = get32(&s, head);
        for (uint32_t steps = 0; c != 0; steps++) {
            if (c > s.nslots || steps > s.nslots) {
                bad++; /* out of range, or a cycle */
                break;
            }
            if (b < RS_NHASH)
                bad++; /* a record nobody deleted */
            if (seen[c]++) {
                bad++; /* a slot on two lists */
                break;
            }
            rs_get(&s, OFF_SLOT(c), &sl, sizeof sl);
            c = sl.sl_next;
        }
    }
    for (uint32_t i = 1; i <= run->nslots; i++)
        if (!seen[i])
            bad++; /* a slot lost from every list */
    free(seen);
    close(s.fd);
    return bad;
}

struct outcome {
    int unsupported;
    double wall, user, sys;
    long long errors;
    struct child_report sum;
};

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void xpipe(int fds[2])
{
    if (pipe(fds) != 0)
        xb_die_errno("pipe");
}

static void one_run(const struct run *run, struct outcome *o)
{
    int ready[2], go[2], res[2];
    pid_t pids[MAX_PROCS];
    memset(o, 0, sizeof *o);
    create_store(run);
    xpipe(ready);
    xpipe(go);
    xpipe(res);
    fflush(NULL);
    for (int k = 0; k < run->procs; k++) {
        pids[k] = fork();
        if (pids[k] < 0)
            xb_die_errno("fork");
        if (pids[k] == 0) {
            close(ready[0]);
            close(go[1]);
            close(res[0]);
            child_main(run, k, ready[1], go[0], res[1]);
        }
    }
    close(ready[1]);
    close(go[0]);
    close(res[1]);
    int busy = 0, failed = 0;
    for (int k = 0; k < run->procs; k++) {
        char st = 'e';
        if (read(ready[0], &st, 1) != 1)
            st = 'e';
        busy += st == 'b';
        failed += st == 'e';
    }
    char cmd = busy || failed ? 'q' : 'g';
    uint64_t t0 = xb_now_ns();
    for (int k = 0; k < run->procs; k++)
        if (write(go[1], &cmd, 1) != 1)
            xb_die_errno("cannot start the children");
    close(go[1]);
    int bad_exit = 0;
    for (int k = 0; k < run->procs; k++) {
        int status;
        struct rusage ru;
        if (wait4(pids[k], &status, 0, &ru) != pids[k])
            xb_die_errno("wait4");
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            bad_exit++;
        o->user += tv_s(ru.ru_utime);
        o->sys += tv_s(ru.ru_stime);
    }
    o->wall = (double)(xb_now_ns() - t0) / 1e9;
    close(ready[0]);
    if (failed || bad_exit) {
        fprintf(stderr, "%s: variant %s: %d of %d children failed.\n", PROG,
                variant_names[run->v], failed + bad_exit, run->procs);
        exit(1);
    }
    if (busy) {
        close(res[0]);
        o->unsupported = 1;
        return;
    }
    for (int k = 0; k < run->procs; k++) {
        struct child_report cr;
        if (read(res[0], &cr, sizeof cr) != (ssize_t)sizeof cr)
            xb_die_errno("cannot read a child's report");
        o->sum.errs.missing += cr.errs.missing;
        o->sum.errs.stale += cr.errs.stale;
        o->sum.errs.corrupt += cr.errs.corrupt;
        o->sum.errs.index += cr.errs.index;
        o->sum.errs.full += cr.errs.full;
        o->sum.fetches += cr.fetches;
        o->sum.stores += cr.stores;
        o->sum.deletes += cr.deletes;
        o->sum.aborts += cr.aborts;
    }
    close(res[0]);
    long long inconsistent = final_check(run);
    o->errors = errs_total(&o->sum.errs) + inconsistent;
    fprintf(stderr,
            "%s: %s procs %d nrec %u: %.3f s wall, %lld fetches, %lld stores, "
            "%lld deletes, %lld aborts; errors: %lld missing, %lld stale, "
            "%lld corrupt, %lld index, %lld free list empty, %lld "
            "inconsistencies in the final file\n",
            PROG, variant_names[run->v], run->procs, run->nrec, o->wall,
            o->sum.fetches, o->sum.stores, o->sum.deletes, o->sum.aborts,
            o->sum.errs.missing, o->sum.errs.stale, o->sum.errs.corrupt,
            o->sum.errs.index, o->sum.errs.full, inconsistent);
    if (run->v != V_NOLOCK && o->errors != 0)
        fprintf(stderr, "%s: variant %s reported %lld errors although it "
                "locks: a bug in the program or the library.\n",
                PROG, variant_names[run->v], o->errors);
}

int main(int argc, char **argv)
{
    long long reps = -1, procs = -1, nrec = -1;
    int quick = 0;
    const char *dir = NULL;
    static const char *const vchoices[] = {"all", "nolock", "coarse", "fine",
                                           "libxac", NULL};
    const char *which = "all";
    static const char *const durs[] = {"nondurable", "durable", NULL};
    const char *dur = "nondurable";
    struct xb_opt opts[] = {
        {"quick", XB_OPT_FLAG, &quick, 0, 0, NULL,
         "small sizes (2 processes, 500 records each), under 10 s"},
        {"reps", XB_OPT_INT, &reps, 1, 100000, NULL,
         "repetitions per variant, each on a fresh store (default 3; quick "
         "1)"},
        {"procs", XB_OPT_INT, &procs, 1, MAX_PROCS, NULL,
         "child processes (default 4; quick 2)"},
        {"nrec", XB_OPT_INT, &nrec, 1, 1000000, NULL,
         "records each child writes first (default 500, as APUE)"},
        {"variant", XB_OPT_CHOICE, &which, 0, 0, vchoices,
         "the concurrency control to run (default all)"},
        {"durability", XB_OPT_CHOICE, &dur, 0, 0, durs,
         "xInit flag of the libxac variant: nondurable (default) or durable "
         "(every commit forced to the log)"},
        {"dir", XB_OPT_STR, &dir, 0, 0, NULL,
         "directory for the store (default $TMPDIR, else /tmp)"},
        {0}};
    xb_opts_parse(argc, argv,
                  "Seeds 004 (APUE 20.9): N processes store, fetch and delete "
                  "records of their own\nin one shared record file, with no "
                  "locking, coarse or fine fcntl locking, or\nLIBXAC "
                  "transactions.  Reports wall, user and sys time and the "
                  "errors seen.",
                  opts);
    if (reps < 0)
        reps = quick ? 1 : 3;
    if (procs < 0)
        procs = quick ? 2 : 4;
    if (nrec < 0)
        nrec = 500;

    const char *work = xb_scratch_create(dir, PROG);
    char path[4096], ctl[4096];
    xb_path(path, sizeof path, work, "records.db");
    xb_path(ctl, sizeof ctl, work, "xac-ctl");
    uint64_t nslots64 = (uint64_t)procs * keys_per_child((uint32_t)nrec) + 16;
    long psz = sysconf(_SC_PAGESIZE);
    uint64_t len = RS_SLOT_BASE + nslots64 * RS_SLOT;
    len = (len + (uint64_t)psz - 1) / (uint64_t)psz * (uint64_t)psz;

    int nv = 0;
    for (int v = 0; v < NVARIANTS; v++)
        nv += strcmp(which, "all") == 0 || strcmp(which, variant_names[v]) == 0;
    int done = 0;
    for (int v = 0; v < NVARIANTS; v++) {
        if (strcmp(which, "all") != 0 && strcmp(which, variant_names[v]) != 0)
            continue;
        struct run run = {.v = (enum variant)v, .path = path, .ctl = ctl,
                          .len = (size_t)len, .nslots = (uint32_t)nslots64,
                          .nrec = (uint32_t)nrec, .procs = (int)procs,
                          .xflags = strcmp(dur, "durable") == 0 ? DURABLE
                                                                : NONDURABLE};
        const char *sut = v == V_LIBXAC ? "libxac" : "os";
        xb_result *rs[4] = {
            xb_result_new("concurrency", "records", sut, "wall_time", "s",
                          XB_LOWER),
            xb_result_new("concurrency", "records", sut, "user_time", "s",
                          XB_LOWER),
            xb_result_new("concurrency", "records", sut, "sys_time", "s",
                          XB_LOWER),
            xb_result_new("concurrency", "records", sut, "errors", "count",
                          XB_LOWER)};
        int unsupported = 0;
        for (long long r = 0; r < reps && !unsupported; r++) {
            struct outcome o;
            xb_remove_tree(ctl);
            one_run(&run, &o);
            unsupported = o.unsupported;
            if (!unsupported) {
                xb_sample(rs[0], o.wall);
                xb_sample(rs[1], o.user);
                xb_sample(rs[2], o.sys);
                xb_sample(rs[3], (double)o.errors);
            }
            xb_progress(((double)done + (double)(r + 1) / (double)reps) / nv,
                        "variant %s repetition %lld of %lld",
                        variant_names[v], r + 1, reps);
        }
        done++;
        for (int j = 0; j < 4; j++) {
            if (unsupported) {
                xb_result_free(rs[j]);
                continue;
            }
            xb_param_str(rs[j], "variant", variant_names[v]);
            xb_param_int(rs[j], "procs", procs);
            xb_param_int(rs[j], "nrec", nrec);
            if (v == V_LIBXAC)
                xb_param_str(rs[j], "durability", dur);
            xb_result_emit(rs[j]);
        }
        if (unsupported)
            fprintf(stderr,
                    "%s: xInit returned XAC_EBUSY (every process slot of the "
                    "control file is taken); no result for variant libxac "
                    "with %lld processes.\n",
                    PROG, procs);
    }
    unlink(path);
    return 0;
}
