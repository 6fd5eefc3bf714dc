/* xac_map.h: the mapped file and the process's working memory (xac_map.c:
 * xMmap, xMunmap, xCheckpoint). */
#ifndef XAC_MAP_H
#define XAC_MAP_H

#include <stddef.h>
#include <stdint.h>

struct xmap {
    char *mp_name;            /* file name as given to xMmap */
    int mp_fd;                /* data file, O_RDWR */
    char *mp_base;            /* the segment: the working memory, shared
                               * mapping, PROT_NONE except touched pages;
                               * or NULL */
    char *mp_back;            /* the same memory, always read-write: where
                               * the fault handler copies snapshot versions */
    int mp_memfd;             /* the working memory (memfd), or -1 */
    size_t mp_len;
    uint32_t mp_npages;
    uint64_t *mp_have;        /* per page: 1 + the commit stamp of the
                               * version the working memory holds, 0 if
                               * none or unknown (xac_fault.c, load);
                               * anonymous MAP_NORESERVE */
    uint8_t *mp_held;         /* per page, one bit: the working memory has
                               * a page there, filled since xMmap or the
                               * last trim (xStats pages_new); in the
                               * mapping of mp_have, after it */
    int mp_reuse;             /* XAC_REUSE: a fault may skip the copy of a
                               * version the working memory holds */
    size_t mp_loaded;         /* pages copied in since the last trim */
    size_t mp_trim_pages;     /* trim after this many (XAC_WORKING_MIB) */
    int mp_share;             /* XAC_SHARE: queries may map windows of the
                               * data file (xac_share.c) */
    uint32_t mp_nshared;      /* windows mapped from the data file now */
};

/* The bytes of mp_have and mp_held together. */
static inline size_t xmap_have_bytes(const struct xmap *mp)
{
    return (size_t)mp->mp_npages * sizeof *mp->mp_have +
           ((size_t)mp->mp_npages + 7) / 8;
}

/* Note that the working memory has a page at pg: 1 if it had none (the
 * kernel gave it a new page, allocated and zeroed, which costs about four
 * times the copy into it: docs/benchmarks-scaling.md, "Which copies
 * cost"), else 0.  Async-signal-safe. */
static inline unsigned xmap_hold(struct xmap *mp, uint32_t pg)
{
    uint8_t bit = (uint8_t)(1u << (pg & 7u));
    unsigned fresh = (mp->mp_held[pg >> 3] & bit) == 0;

    mp->mp_held[pg >> 3] |= bit;
    return fresh;
}

struct xac_env;
/* xMunmap and xShutdown: detach and unmap.  0 or an error. */
int xmap_release(struct xac_env *e);
/* A child of fork(): drop the inherited mapping without touching the
 * shared state. */
void xmap_forget(struct xac_env *e);

#endif
