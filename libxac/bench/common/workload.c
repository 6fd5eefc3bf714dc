/* workload.c: see workload.h. */
#include "workload.h"

#include <stdlib.h>
#include <string.h>

uint64_t xb_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void xb_rng_seed(struct xb_rng *rng, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        rng->s[i] = xb_splitmix64(&seed);
}

uint64_t xb_rng_next(struct xb_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t xb_rng_below(struct xb_rng *rng, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n, x;
    do
        x = xb_rng_next(rng);
    while (x >= limit);
    return x % n;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

void xb_workload_keys(uint64_t *keys, size_t n, uint64_t seed,
                      enum xb_order order)
{
    struct xb_rng rng;
    xb_rng_seed(&rng, seed);
    for (size_t i = 0; i < n; i++)
        keys[i] = xb_rng_next(&rng);
    if (order == XB_ORDER_SORTED)
        qsort(keys, n, sizeof *keys, cmp_u64);
}

int xb_order_parse(const char *name)
{
    if (strcmp(name, "random") == 0)
        return XB_ORDER_RANDOM;
    if (strcmp(name, "sorted") == 0)
        return XB_ORDER_SORTED;
    return -1;
}

const char *xb_order_name(enum xb_order order)
{
    return order == XB_ORDER_SORTED ? "sorted" : "random";
}

void xb_workload_slice(size_t n, int p, int nprocs, size_t *begin,
                       size_t *end)
{
    *begin = n * (size_t)p / (size_t)nprocs;
    *end = n * (size_t)(p + 1) / (size_t)nprocs;
}

void xb_workload_value(uint64_t key, unsigned char *buf, size_t len)
{
    uint64_t state = key;
    size_t i = 0;
    while (i < len) {
        uint64_t w = xb_splitmix64(&state);
        for (int b = 0; b < 8 && i < len; b++, i++)
            buf[i] = (unsigned char)(w >> (8 * b));
    }
}

void xb_key_encode(uint64_t key, unsigned char out[XB_KEY_BYTES])
{
    for (int i = 0; i < XB_KEY_BYTES; i++)
        out[i] = (unsigned char)(key >> (8 * (XB_KEY_BYTES - 1 - i)));
}

uint64_t xb_key_decode(const unsigned char in[XB_KEY_BYTES])
{
    uint64_t k = 0;
    for (int i = 0; i < XB_KEY_BYTES; i++)
        k = (k << 8) | in[i];
    return k;
}
