/* xac_crc.c: CRC32C (Castagnoli), the checksum of every log record.
 *
 * On x86-64 with SSE4.2 the crc32 instruction does 8 bytes a step; other
 * machines use a byte-at-a-time table (built once, 1 KiB).  Both give the
 * standard CRC32C: xac_crc32c(0, "123456789", 9) == 0xE3069283.
 */
#include "xac_crc.h"

#include <string.h>

static uint32_t crc_table[256];
static int crc_table_ready;

static void table_init(void)
{
    uint32_t i, j, c;

    for (i = 0; i < 256; i++) {
        c = i;
        for (j = 0; j < 8; j++)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_table[i] = c;
    }
    __atomic_store_n(&crc_table_ready, 1, __ATOMIC_RELEASE);
}

uint32_t xac_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
    const unsigned char *p = buf;

    if (!__atomic_load_n(&crc_table_ready, __ATOMIC_ACQUIRE))
        table_init();
    crc = ~crc;
    while (len-- > 0)
        crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("sse4.2"))) static uint32_t
crc_hw(uint32_t crc, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    uint64_t c = ~crc, w;

    while (len > 0 && ((uintptr_t)p & 7) != 0) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
        len--;
    }
    while (len >= 8) {
        memcpy(&w, p, 8);
        c = __builtin_ia32_crc32di(c, w);
        p += 8;
        len -= 8;
    }
    while (len-- > 0)
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
    return ~(uint32_t)c;
}

static int have_hw = -1;

int xac_crc32c_hw(void)
{
    if (have_hw < 0) {
        __builtin_cpu_init();
        have_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
    }
    return have_hw;
}

uint32_t xac_crc32c(uint32_t crc, const void *buf, size_t len)
{
    if (xac_crc32c_hw())
        return crc_hw(crc, buf, len);
    return xac_crc32c_sw(crc, buf, len);
}
#else
int xac_crc32c_hw(void)
{
    return 0;
}

uint32_t xac_crc32c(uint32_t crc, const void *buf, size_t len)
{
    return xac_crc32c_sw(crc, buf, len);
}
#endif
