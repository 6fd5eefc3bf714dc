/* checksums.h: the page checksums of thesis table C.8, without OpenSSL.
 *
 *   MD5     RFC 1321
 *   SHA-1   FIPS 180-4
 *   CRC32C  Castagnoli polynomial (reflected 0x82F63B78), initial value
 *           and final XOR 0xFFFFFFFF, as in iSCSI (RFC 3720) and ext4;
 *           "123456789" -> 0xE3069283.  Two implementations: a
 *           byte-at-a-time table and the SSE4.2 crc32 instruction.
 *
 * One-shot functions: a page is always hashed whole.  Known-answer tests
 * are in tests/test_checksums.c.
 */
#ifndef XB_CHECKSUMS_H
#define XB_CHECKSUMS_H

#include <stddef.h>
#include <stdint.h>

void xb_md5(const void *data, size_t len, uint8_t out[16]);
void xb_sha1(const void *data, size_t len, uint8_t out[20]);
uint32_t xb_crc32c_sw(const void *data, size_t len);
/* 1 if this CPU has the SSE4.2 crc32 instruction. */
int xb_crc32c_hw_available(void);
/* Only call when xb_crc32c_hw_available(); falls back to the table on
 * builds for other architectures. */
uint32_t xb_crc32c_hw(const void *data, size_t len);

#endif
