/* storage_checksum: the cost of checksumming one page (thesis table C.8).
 *
 * Each repetition hashes one 4 KiB page that is already in the CPU cache
 * and times it.  Results (suite "storage", sut "os", benchmark
 * "page_checksum"): metric "checksum_time" in ns, one sample per
 * repetition, param algorithm = md5 | sha1 | crc32c_table | crc32c_sse42
 * (the last only where the CPU has SSE4.2; said on stderr otherwise).
 * The implementations are in common/checksums.c, checked by
 * tests/test_checksums.c.
 */
#include "checksums.h"
#include "clock.h"
#include "result.h"
#include "scratch.h"
#include "storage_opts.h"
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum algo { MD5, SHA1, CRC_TABLE, CRC_HW, NALGO };
static const char *const names[NALGO] = {"md5", "sha1", "crc32c_table",
                                         "crc32c_sse42"};
static volatile uint32_t sink;

static void hash(enum algo a, const void *page, size_t len)
{
    uint8_t d[20];
    switch (a) {
    case MD5:
        xb_md5(page, len, d);
        sink ^= d[0];
        break;
    case SHA1:
        xb_sha1(page, len, d);
        sink ^= d[0];
        break;
    case CRC_TABLE:
        sink ^= xb_crc32c_sw(page, len);
        break;
    default:
        sink ^= xb_crc32c_hw(page, len);
        break;
    }
}

int main(int argc, char **argv)
{
    struct xb_storage_opts o;
    xb_storage_opts_parse(
        argc, argv,
        "Thesis table C.8: time to checksum one page with MD5, SHA-1 and "
        "CRC32C\n(table-driven and SSE4.2).",
        "pages hashed per algorithm (default 10000; quick 1000)", NULL, NULL,
        &o);
    long long reps = xb_pick(o.reps, o.quick, 1000, 10000);
    size_t psize = (size_t)sysconf(_SC_PAGESIZE);
    uint64_t *page = malloc(psize);
    if (page == NULL)
        xb_die_errno("malloc");
    struct xb_rng rng;
    xb_rng_seed(&rng, XB_WORKLOAD_SEED);
    for (size_t i = 0; i < psize / 8; i++)
        page[i] = xb_rng_next(&rng);

    for (int a = 0; a < NALGO; a++) {
        if (a == CRC_HW && !xb_crc32c_hw_available()) {
            fprintf(stderr, "storage_checksum: this CPU has no SSE4.2 crc32 "
                            "instruction; no result for crc32c_sse42.\n");
            continue;
        }
        xb_result *r = xb_result_new("storage", "page_checksum", "os",
                                     "checksum_time", "ns", XB_LOWER);
        hash((enum algo)a, page, psize); /* warm the code and the tables */
        for (long long i = 0; i < reps; i++) {
            page[i % (psize / 8)]++; /* a different page every time */
            uint64_t t0 = xb_now_ns();
            hash((enum algo)a, page, psize);
            xb_sample(r, (double)(xb_now_ns() - t0));
        }
        xb_param_str(r, "algorithm", names[a]);
        xb_param_int(r, "page_bytes", (long long)psize);
        xb_result_emit(r);
        xb_progress((double)(a + 1) / NALGO, "%s done", names[a]);
    }
    free(page);
    return 0;
}
