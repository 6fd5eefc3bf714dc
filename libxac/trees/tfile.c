/* tfile.c: see tfile.h. */
#include "tfile.h"

#include <string.h>

static struct tf_alloc *tf_al(const struct ts_store *s)
{
    return ts_at(s, TF_PAGE);
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

uint64_t tf_alloc(struct ts_store *s, uint64_t len)
{
    struct tf_alloc *a = tf_al(s);

    /* Advisory stores: the record changes below, so open its page for
     * writing now rather than on the fault of the first store. */
    ts_touch(s, a, sizeof *a, READ_WRITE);
    len = tf_round(len);
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

int tf_can_alloc(const struct ts_store *s, uint64_t len, uint64_t n)
{
    const struct tf_alloc *a = tf_al(s);
    uint64_t room = tf_header(s)->h_file_bytes - a->a_next;

    len = tf_round(len);
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
    return used;
}
