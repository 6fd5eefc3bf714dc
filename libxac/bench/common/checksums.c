/* checksums.c: see checksums.h. */
#include "checksums.h"

#include <string.h>

static inline uint32_t rol32(uint32_t x, int k)
{
    return (x << k) | (x >> (32 - k));
}

/* ---- MD5 (RFC 1321) ---- */

static const uint32_t md5_k[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a,
    0xa8304613, 0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
    0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340,
    0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8,
    0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
    0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
    0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92,
    0xffeff47d, 0x85845dd1, 0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
    0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};
static const int md5_r[64] = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7,
                              12, 17, 22, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,
                              14, 20, 5,  9, 14, 20, 4, 11, 16, 23, 4, 11, 16,
                              23, 4,  11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21,
                              6,  10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};

static void md5_block(uint32_t *h, const uint8_t *p)
{
    uint32_t w[16], a = h[0], b = h[1], c = h[2], d = h[3];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
               (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
    for (int i = 0; i < 64; i++) {
        uint32_t f;
        int g;
        if (i < 16) {
            f = (b & c) | (~b & d);
            g = i;
        } else if (i < 32) {
            f = (d & b) | (~d & c);
            g = (5 * i + 1) % 16;
        } else if (i < 48) {
            f = b ^ c ^ d;
            g = (3 * i + 5) % 16;
        } else {
            f = c ^ (b | ~d);
            g = (7 * i) % 16;
        }
        uint32_t t = d;
        d = c;
        c = b;
        b = b + rol32(a + f + md5_k[i] + w[g], md5_r[i]);
        a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
}

/* Merkle-Damgard padding shared by MD5 (little-endian length) and SHA-1
 * (big-endian length). */
static void md_run(void (*block)(uint32_t *, const uint8_t *), uint32_t *h,
                   const uint8_t *data, size_t len, int big_endian)
{
    uint8_t tail[128];
    size_t full = len / 64 * 64, rest = len - full;
    for (size_t i = 0; i < full; i += 64)
        block(h, data + i);
    memset(tail, 0, sizeof tail);
    memcpy(tail, data + full, rest);
    tail[rest] = 0x80;
    size_t tlen = rest < 56 ? 64 : 128;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++)
        tail[big_endian ? tlen - 1 - i : tlen - 8 + i] =
            (uint8_t)(bits >> (8 * i));
    for (size_t i = 0; i < tlen; i += 64)
        block(h, tail + i);
}

void xb_md5(const void *data, size_t len, uint8_t out[16])
{
    uint32_t h[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
    md_run(md5_block, h, data, len, 0);
    for (int i = 0; i < 16; i++)
        out[i] = (uint8_t)(h[i / 4] >> (8 * (i % 4)));
}

/* ---- SHA-1 (FIPS 180-4) ---- */

static void sha1_block(uint32_t *h, const uint8_t *p)
{
    uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 80; i++)
        w[i] = rol32(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i < 20) {
            f = (b & c) | (~b & d);
            k = 0x5a827999;
        } else if (i < 40) {
            f = b ^ c ^ d;
            k = 0x6ed9eba1;
        } else if (i < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8f1bbcdc;
        } else {
            f = b ^ c ^ d;
            k = 0xca62c1d6;
        }
        uint32_t t = rol32(a, 5) + f + e + k + w[i];
        e = d;
        d = c;
        c = rol32(b, 30);
        b = a;
        a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

void xb_sha1(const void *data, size_t len, uint8_t out[20])
{
    uint32_t h[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476,
                     0xc3d2e1f0};
    md_run(sha1_block, h, data, len, 1);
    for (int i = 0; i < 20; i++)
        out[i] = (uint8_t)(h[i / 4] >> (24 - 8 * (i % 4)));
}

/* ---- CRC32C ---- */

static uint32_t crc_table[256];
static int crc_table_ready;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
        crc_table[i] = c;
    }
    crc_table_ready = 1;
}

uint32_t xb_crc32c_sw(const void *data, size_t len)
{
    const uint8_t *p = data;
    uint32_t c = 0xffffffffu;
    if (!crc_table_ready)
        crc_init();
    for (size_t i = 0; i < len; i++)
        c = crc_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

#if defined(__x86_64__)
int xb_crc32c_hw_available(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2");
}

__attribute__((target("sse4.2"))) uint32_t xb_crc32c_hw(const void *data,
                                                        size_t len)
{
    const uint8_t *p = data;
    uint64_t c = 0xffffffffu;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        c = __builtin_ia32_crc32di(c, w);
    }
    uint32_t c32 = (uint32_t)c;
    for (; i < len; i++)
        c32 = __builtin_ia32_crc32qi(c32, p[i]);
    return c32 ^ 0xffffffffu;
}
#else
int xb_crc32c_hw_available(void)
{
    return 0;
}

uint32_t xb_crc32c_hw(const void *data, size_t len)
{
    return xb_crc32c_sw(data, len);
}
#endif
