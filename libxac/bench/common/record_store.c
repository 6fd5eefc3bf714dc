/* record_store.c: see record_store.h. */
#include "record_store.h"

#include "scratch.h"
#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RS_MAGIC 0x63657278u /* "xrec" little-endian */
#define RS_FORMAT 1u
#define RS_NHASH 137u

struct rs_head {
    uint32_t rh_magic, rh_format, rh_nslots, rh_nhash;
    uint32_t rh_free; /* first free slot, 1-based; 0 = none */
    uint32_t rh_pad[3];
    uint32_t rh_bucket[RS_NHASH]; /* first slot of each chain; 0 = none */
};

_Static_assert(sizeof(struct rs_slot) == RS_SLOT, "slot layout");
_Static_assert(sizeof(struct rs_head) <= RS_SLOT_BASE, "header layout");

#define OFF_FREE offsetof(struct rs_head, rh_free)
#define OFF_BUCKET(b) (offsetof(struct rs_head, rh_bucket) + 4u * (b))
#define OFF_SLOT(i) ((off_t)RS_SLOT_BASE + (off_t)((i)-1) * RS_SLOT)
#define OFF_NEXT(i) (OFF_SLOT(i) + (off_t)offsetof(struct rs_slot, sl_next))

static void rs_die(const char *what)
{
    fprintf(stderr, "%s: child %d: %s: %s\n", program_invocation_short_name,
            (int)getpid(), what, strerror(errno));
    _exit(1);
}

static void rs_get(struct rs *s, off_t off, void *p, size_t n)
{
    if (s->base != NULL) {
        memcpy(p, s->base + off, n);
        return;
    }
    if (pread(s->fd, p, n, off) != (ssize_t)n)
        rs_die("pread of the store failed");
}

static void rs_put(struct rs *s, off_t off, const void *p, size_t n)
{
    if (s->base != NULL) {
        memcpy(s->base + off, p, n);
        return;
    }
    if (pwrite(s->fd, p, n, off) != (ssize_t)n)
        rs_die("pwrite to the store failed");
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
 * the end of the file. */
static void lk(struct rs *s, short type, off_t off, off_t len)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = off,
                       .l_len = len};
    while (fcntl(s->fd, F_SETLKW, &fl) != 0)
        if (errno != EINTR && errno != EDEADLK)
            rs_die("fcntl lock failed");
}

static void lock_chain(struct rs *s, uint32_t b, short type)
{
    if (s->locking == RS_COARSE)
        lk(s, type, 0, 0);
    else if (s->locking == RS_FINE)
        lk(s, type, (off_t)OFF_BUCKET(b), 1);
}

static void unlock_chain(struct rs *s, uint32_t b)
{
    lock_chain(s, b, F_UNLCK);
}

/* The free list has a lock of its own only under fine locking; coarse
 * locking already holds the whole file. */
static void lock_free(struct rs *s, short type)
{
    if (s->locking == RS_FINE)
        lk(s, type, (off_t)OFF_FREE, 1);
}

static uint32_t rs_hash(uint64_t key)
{
    uint64_t st = key;
    return (uint32_t)(xb_splitmix64(&st) % RS_NHASH);
}

uint32_t rs_sum(uint64_t key, uint32_t ver, uint32_t len,
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
        s->slots_read++;
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

int rs_fetch(struct rs *s, uint64_t key, struct rs_slot *sl)
{
    uint32_t b = rs_hash(key), prev, cur;
    lock_chain(s, b, F_RDLCK);
    int rc = rs_find(s, b, key, &prev, &cur, sl);
    unlock_chain(s, b);
    return rc;
}

int rs_insert(struct rs *s, const struct rs_slot *rec)
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
        put32(s, (off_t)OFF_FREE, get32(s, OFF_NEXT(f)));
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

int rs_replace(struct rs *s, const struct rs_slot *rec)
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

int rs_delete(struct rs *s, uint64_t key)
{
    uint32_t b = rs_hash(key), prev, cur;
    struct rs_slot sl;
    lock_chain(s, b, F_WRLCK);
    int rc = rs_find(s, b, key, &prev, &cur, &sl);
    if (rc == 1) {
        if (prev == 0)
            put32(s, (off_t)OFF_BUCKET(b), sl.sl_next);
        else
            put32(s, OFF_NEXT(prev), sl.sl_next);
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

size_t rs_file_bytes(uint32_t nslots, size_t page)
{
    uint64_t len = RS_SLOT_BASE + (uint64_t)nslots * RS_SLOT;
    return (size_t)((len + page - 1) / page * page);
}

void rs_create(const char *path, uint32_t nslots, size_t len)
{
    unsigned char *buf = calloc(1, len);
    if (buf == NULL)
        xb_die_errno("cannot allocate the store image");
    struct rs_head *h = (struct rs_head *)buf;
    h->rh_magic = RS_MAGIC;
    h->rh_format = RS_FORMAT;
    h->rh_nslots = nslots;
    h->rh_nhash = RS_NHASH;
    h->rh_free = 1;
    for (uint32_t i = 1; i <= nslots; i++) {
        struct rs_slot *sl = (struct rs_slot *)(buf + OFF_SLOT(i));
        sl->sl_next = i < nslots ? i + 1 : 0;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        xb_die_errno("cannot create the store");
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, buf + done, len - done);
        if (n <= 0)
            xb_die_errno("cannot write the store");
        done += (size_t)n;
    }
    if (close(fd) != 0)
        xb_die_errno("cannot close the store");
    free(buf);
}

long long rs_final_check(const char *path, uint32_t nslots)
{
    struct rs s = {.fd = open(path, O_RDONLY), .nslots = nslots,
                   .locking = RS_NOLOCK};
    if (s.fd < 0)
        xb_die_errno("cannot reopen the store");
    unsigned char *seen = calloc((size_t)nslots + 1, 1);
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
    for (uint32_t i = 1; i <= nslots; i++)
        if (!seen[i])
            bad++; /* a slot lost from every list */
    free(seen);
    close(s.fd);
    return bad;
}
