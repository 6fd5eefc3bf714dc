/* tfile.c: see tfile.h. */
#include "tfile.h"

#include <string.h>
#include <unistd.h>

static struct tf_alloc *tf_al(const struct ts_store *s)
{
    return ts_at(s, TF_PAGE);
}

/* This process's arena. */
static struct tf_arena *tf_ar(const struct ts_store *s)
{
    return ts_at(s, (2u + (uint64_t)getpid() % TF_ARENAS) * TF_PAGE);
}

static uint64_t tf_round(uint64_t len)
{
    return (len + TF_PAGE - 1) & ~(uint64_t)(TF_PAGE - 1);
}

void tf_format(struct ts_store *s, enum tf_kind kind, uint32_t value_bytes,
               uint32_t block_bytes)
{
    struct tf_header *h = tf_header(s);
    struct tf_alloc *a = tf_al(s);

    memset(h, 0, sizeof *h);
    h->h_magic = TF_MAGIC;
    h->h_format = TF_FORMAT;
    h->h_kind = kind;
    h->h_file_bytes = s->ts_len;
    h->h_value_bytes = value_bytes;
    h->h_block_bytes = block_bytes;
    memset(a, 0, sizeof *a);
    a->a_next = TF_DATA;
    for (uint32_t i = 0; i < TF_ARENAS; i++)
        memset(ts_at(s, (2u + (uint64_t)i) * TF_PAGE), 0,
               sizeof(struct tf_arena));
}

const char *tf_check_header(const struct ts_store *s)
{
    const struct tf_header *h = tf_header(s);

    if (h->h_magic != TF_MAGIC)
        return "not a tree file (wrong magic number)";
    if (h->h_format != TF_FORMAT)
        return "a tree file of another format version";
    if (h->h_kind != TF_BTREE && h->h_kind != TF_COBTREE)
        return "a tree file of an unknown kind";
    if (h->h_file_bytes > s->ts_len)
        return "the tree file is longer than the mapping";
    return NULL;
}

/* len (rounded) from page 1: first fit, else the bump pointer. */
static uint64_t tf_take(struct ts_store *s, uint64_t len)
{
    struct tf_alloc *a = tf_al(s);

    /* Advisory stores: the record changes below, so open its page for
     * writing now rather than on the fault of the first store. */
    ts_touch(s, a, sizeof *a, READ_WRITE);
    for (uint32_t i = 0; i < a->a_nfree; i++) {
        struct tf_extent *e = &a->a_free[i];
        if (e->e_len < len)
            continue;
        uint64_t off = e->e_off;
        e->e_off += len;
        e->e_len -= len;
        if (e->e_len == 0)
            *e = a->a_free[--a->a_nfree];
        return off;
    }
    if (a->a_next + len > tf_header(s)->h_file_bytes)
        return 0;
    uint64_t off = a->a_next;
    a->a_next += len;
    return off;
}

uint64_t tf_alloc(struct ts_store *s, uint64_t len)
{
    len = tf_round(len);
    if (len > TF_ARENA_MAX)
        return tf_take(s, len);
    struct tf_arena *ar = tf_ar(s);
    ts_touch(s, ar, sizeof *ar, READ_WRITE);
    if (ar->ar_end - ar->ar_next < len) {
        uint64_t run = tf_take(s, TF_ARENA_CHUNK);
        if (run == 0)
            return tf_take(s, len); /* the file is nearly full */
        if (ar->ar_end > ar->ar_next)
            tf_free(s, ar->ar_next, ar->ar_end - ar->ar_next);
        ar->ar_next = run;
        ar->ar_end = run + TF_ARENA_CHUNK;
    }
    uint64_t off = ar->ar_next;
    ar->ar_next += len;
    return off;
}

int tf_can_alloc(const struct ts_store *s, uint64_t len, uint64_t n)
{
    const struct tf_alloc *a = tf_al(s);
    const struct tf_arena *ar = tf_ar(s);
    uint64_t room = tf_header(s)->h_file_bytes - a->a_next, k;

    len = tf_round(len);
    /* A run an arena takes holds as many as it would directly; the rest
     * of the arena's old run (less than len) is no loss for len. */
    if (len <= TF_ARENA_MAX) {
        k = (ar->ar_end - ar->ar_next) / len;
        n = k >= n ? 0 : n - k;
    }
    for (uint32_t i = 0; i < a->a_nfree && n > 0; i++) {
        uint64_t k = a->a_free[i].e_len / len;
        n = k >= n ? 0 : n - k;
    }
    return room / len >= n;
}

void tf_free(struct ts_store *s, uint64_t off, uint64_t len)
{
    struct tf_alloc *a = tf_al(s);

    len = tf_round(len);
    if (off + len == a->a_next) {
        a->a_next = off;
        return;
    }
    if (a->a_nfree < TF_MAX_FREE)
        a->a_free[a->a_nfree++] = (struct tf_extent){off, len};
}

uint64_t tf_used(const struct ts_store *s)
{
    const struct tf_alloc *a = tf_al(s);
    uint64_t used = a->a_next - TF_DATA;

    for (uint32_t i = 0; i < a->a_nfree; i++)
        used -= a->a_free[i].e_len;
    for (uint32_t i = 0; i < TF_ARENAS; i++) {
        const struct tf_arena *ar = ts_at(s, (2u + (uint64_t)i) * TF_PAGE);
        used -= ar->ar_end - ar->ar_next;
    }
    return used;
}

int tf_meta_page(uint64_t off)
{
    return off < TF_PAGE ? 1 : off < TF_DATA ? 2 : 0;
}
