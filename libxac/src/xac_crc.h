/* xac_crc.h: CRC32C for the log (xac_crc.c). */
#ifndef XAC_CRC_H
#define XAC_CRC_H

#include <stddef.h>
#include <stdint.h>

/* Continue a CRC32C: start with crc = 0. */
uint32_t xac_crc32c(uint32_t crc, const void *buf, size_t len);
/* The table version, always available (tests compare the two). */
uint32_t xac_crc32c_sw(uint32_t crc, const void *buf, size_t len);
/* 1 if xac_crc32c uses the SSE4.2 instruction. */
int xac_crc32c_hw(void);

#endif
