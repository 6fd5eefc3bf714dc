/* workload.h: the keys and values every search-tree baseline inserts.
 *
 * Berkeley DB, LMDB and the LIBXAC trees must see exactly the same
 * workload, so it is defined here once:
 *
 *  - keys are 64-bit integers drawn from xoshiro256** (Blackman and Vigna,
 *    2018, https://prng.di.unimi.it/), seeded by expanding a 64-bit seed
 *    with splitmix64, as its authors recommend;
 *  - "random" order is the draw order; "sorted" is the same keys ascending;
 *  - process p of P inserts keys [p*n/P, (p+1)*n/P) of that sequence;
 *  - the value of a key is XB_VALUE_BYTES bytes derived from the key alone
 *    (splitmix64 seeded with the key), so any reader can verify any record;
 *  - stores that compare keys as bytes get them big-endian
 *    (xb_key_encode), so byte order equals numeric order.
 *
 * The generators are specified bit-for-bit: the same seed gives the same
 * sequence on every machine and compiler.
 */
#ifndef XB_WORKLOAD_H
#define XB_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#define XB_WORKLOAD_SEED 20050520u /* default --seed */
#define XB_VALUE_BYTES 512
#define XB_KEY_BYTES 8

enum xb_order { XB_ORDER_RANDOM, XB_ORDER_SORTED };

/* splitmix64 (Steele, Lea, Flood 2014): advances *state, returns a word. */
uint64_t xb_splitmix64(uint64_t *state);

struct xb_rng {
    uint64_t s[4];
};

/* Seed xoshiro256** from one word through splitmix64. */
void xb_rng_seed(struct xb_rng *rng, uint64_t seed);
uint64_t xb_rng_next(struct xb_rng *rng);
/* Uniform in [0, n) by rejection (no modulo bias); n > 0. */
uint64_t xb_rng_below(struct xb_rng *rng, uint64_t n);

/* Fill keys[0..n) with the workload's keys in the given order. */
void xb_workload_keys(uint64_t *keys, size_t n, uint64_t seed,
                      enum xb_order order);
/* Parse "random" / "sorted"; returns -1 for anything else. */
int xb_order_parse(const char *name);
const char *xb_order_name(enum xb_order order);

/* The first and one-past-last index process p of nprocs handles. */
void xb_workload_slice(size_t n, int p, int nprocs, size_t *begin,
                       size_t *end);

/* Write the value of key into buf[0..len). */
void xb_workload_value(uint64_t key, unsigned char *buf, size_t len);

/* Big-endian encoding, so memcmp order equals numeric order. */
void xb_key_encode(uint64_t key, unsigned char out[XB_KEY_BYTES]);
uint64_t xb_key_decode(const unsigned char in[XB_KEY_BYTES]);

#endif
