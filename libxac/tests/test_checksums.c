/* test_checksums: known answers for the page checksums of bench/common
 * (storage_checksum, thesis table C.8): RFC 1321 section A.5 for MD5,
 * FIPS 180 / RFC 3174 for SHA-1, and the CRC32C check value of
 * "123456789" (RFC 3720 B.4 vectors too) for both CRC32C variants. */
#include <stdint.h>
#include <string.h>

#include "checksums.h"
#include "support/testhelp.h"

static void hex(const uint8_t *d, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

static int md5_is(const char *msg, size_t len, const char *want)
{
    uint8_t d[16];
    char got[33];
    xb_md5(msg, len, d);
    hex(d, 16, got);
    return strcmp(got, want) == 0;
}

static int sha1_is(const char *msg, size_t len, const char *want)
{
    uint8_t d[20];
    char got[41];
    xb_sha1(msg, len, d);
    hex(d, 20, got);
    return strcmp(got, want) == 0;
}

int main(void)
{
    static const char *abc80 = "1234567890123456789012345678901234567890"
                               "1234567890123456789012345678901234567890";
    static const char *sha2blk =
        "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    test_cond("MD5 of \"\"",
              md5_is("", 0, "d41d8cd98f00b204e9800998ecf8427e"));
    test_cond("MD5 of \"abc\"",
              md5_is("abc", 3, "900150983cd24fb0d6963f7d28e17f72"));
    test_cond("MD5 of \"message digest\"",
              md5_is("message digest", 14,
                     "f96b697d7cb7938d525a2f31aaf161d0"));
    test_cond("MD5 of 80 digits (two blocks)",
              md5_is(abc80, 80, "57edf4a22be3c955ac49da2e2107b67a"));
    test_cond("SHA-1 of \"abc\"",
              sha1_is("abc", 3, "a9993e364706816aba3e25717850c26c9cd0d89d"));
    test_cond("SHA-1 of \"\"",
              sha1_is("", 0, "da39a3ee5e6b4b0d3255bfef95601890afd80709"));
    test_cond("SHA-1 of the 448-bit FIPS message",
              sha1_is(sha2blk, strlen(sha2blk),
                      "84983e441c3bd26ebaae4aa1f95129e5e54670f1"));

    static uint8_t million_a[1000000];
    memset(million_a, 'a', sizeof million_a);
    uint8_t d[20];
    char got[41];
    xb_sha1(million_a, sizeof million_a, d);
    hex(d, 20, got);
    test_cond("SHA-1 of a million 'a'",
              strcmp(got, "34aa973cd4c4daa4f61eeb2bdbad27316534016f") == 0);

    test_cond("CRC32C (table) of \"123456789\" is 0xE3069283",
              xb_crc32c_sw("123456789", 9) == 0xe3069283u);
    uint8_t zeros[32], ones[32], inc[32];
    memset(zeros, 0, sizeof zeros);
    memset(ones, 0xff, sizeof ones);
    for (int i = 0; i < 32; i++)
        inc[i] = (uint8_t)i;
    test_cond("CRC32C (table) of 32 zero bytes (RFC 3720)",
              xb_crc32c_sw(zeros, 32) == 0x8a9136aau);
    test_cond("CRC32C (table) of 32 0xFF bytes (RFC 3720)",
              xb_crc32c_sw(ones, 32) == 0x62a8ab43u);
    test_cond("CRC32C (table) of bytes 0..31 (RFC 3720)",
              xb_crc32c_sw(inc, 32) == 0x46dd794eu);
    if (xb_crc32c_hw_available()) {
        test_cond("CRC32C (SSE4.2) of \"123456789\" is 0xE3069283",
                  xb_crc32c_hw("123456789", 9) == 0xe3069283u);
        int same = 1;
        for (size_t n = 0; n <= sizeof million_a && n < 5000; n += 7)
            same &= xb_crc32c_hw(million_a + 3, n) ==
                    xb_crc32c_sw(million_a + 3, n);
        test_cond("CRC32C SSE4.2 equals the table on every length", same);
    } else {
        printf("CRC32C SSE4.2: not available on this CPU, skipped\n");
    }
    return test_report();
}
