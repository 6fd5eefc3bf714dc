/* tstore.h: where a search tree lives, and its transaction hooks.
 *
 * The trees (btree.h, cobtree.h) are written once, as serial code that
 * reads and writes a memory-mapped file through offsets.  A store is that
 * mapping plus three hooks; the kind of store decides which version of the
 * tree runs:
 *
 *   TS_SERIAL  open(2) + mmap(MAP_SHARED): the hooks do nothing; one
 *              process, no transactions (the thesis's "serial" trees);
 *   TS_XAC     xInit(dir, NONDURABLE or DURABLE, struct ts_config) +
 *              xMmap(): ts_begin() is xbegin(),
 *              ts_end() is xend(), and ts_touch() is setPageAccess() when
 *              the store was opened with advisory calls on.
 *
 * tree.c wraps every operation in
 *
 *     do { ts_begin(s); op(); } while (ts_end(s) == ABORTED);
 *
 * and nothing else changes between the two versions (docs/trees.md counts
 * the lines).  One store per process (LIBXAC maps one segment).
 *
 * Caveats (TS_XAC): every access to the mapping must happen between
 * ts_begin()/ts_end() or ts_begin_query()/ts_end_query(); a process must
 * not fork() while a TS_XAC store is open and use it in the child.
 */
#ifndef TS_STORE_H
#define TS_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "xac.h"

enum ts_kind { TS_SERIAL = 1, TS_XAC = 2 };

/** Durability of a TS_XAC store (TS_SERIAL ignores it: msync is the
 * caller's business). */
enum ts_durability { TS_NONDURABLE = 0, TS_DURABLE = 1 };

/** How to open a store.  Zero-initialise and set the fields you need:
 * the defaults are nondurable, no advisory calls. */
struct ts_config {
    enum ts_kind kind;
    enum ts_durability durability; /* TS_XAC: xInit(dir, DURABLE) if set */
    int advisory;                  /* TS_XAC: setPageAccess() in ts_touch */
};

struct ts_store {
    enum ts_kind ts_kind;
    enum ts_durability ts_durability;
    int ts_advisory;  /* call setPageAccess() from ts_touch() */
    char *ts_base;    /* the mapping */
    size_t ts_len;    /* its length in bytes */
    int ts_fd;        /* TS_SERIAL: the file */
    unsigned long long ts_aborts; /* ts_end() calls that returned ABORTED */
    char ts_path[4096];
};

/** Open (creating it sparse if needed) file @p name in directory @p dir,
 * mapping its first @p len bytes (a multiple of 4096).  TS_XAC also calls
 * xInit(dir, NONDURABLE); the control file lives in @p dir.
 *
 * @return 0; an XAC_E* code from xInit() (notably XAC_EBUSY when the
 *     library refuses a second live process); an errno value.
 */
int ts_open(struct ts_store *s, enum ts_kind kind, const char *dir,
            const char *name, size_t len, int advisory);

/** ts_open() with a configuration: TS_XAC with TS_DURABLE calls
 * xInit(dir, DURABLE), which runs recovery from "<dir>/xac.log.*" when no
 * other process uses @p dir, so reopening a store after a crash brings back
 * every transaction whose ts_end() returned COMMITTED.  ts_open() is this
 * with durability TS_NONDURABLE. */
int ts_open_config(struct ts_store *s, const struct ts_config *cfg,
                   const char *dir, const char *name, size_t len);

/** Counters and settings of a TS_XAC store (xStats(); the log counters
 * stay 0 when nondurable); zeroes for TS_SERIAL.  @return 0 or an XAC_E*
 * code. */
int ts_stats(struct ts_store *s, struct xac_stats *st);

/** Unmap (TS_XAC: xMunmap + xShutdown).  @return 0 or the first error. */
int ts_close(struct ts_store *s);

/** Begin an updating (ts_begin) or read-only (ts_begin_query)
 * transaction; abort()s if LIBXAC refuses, which is a programming error. */
void ts_begin(struct ts_store *s);
void ts_begin_query(struct ts_store *s);

/** End it: COMMITTED, ABORTED (retry), or an errno value from the commit.
 * TS_SERIAL always returns COMMITTED.  Each ABORTED is counted in
 * ts_aborts (the benchmarks report aborts per process). */
int ts_end(struct ts_store *s);
int ts_end_query(struct ts_store *s);

/** Advisory: the transaction will access [p, p+len) with @p mode (READ or
 * READ_WRITE).  Only changes speed, never results. */
void ts_touch_pages(struct ts_store *s, const void *p, size_t len, int mode);

static inline void ts_touch(struct ts_store *s, const void *p, size_t len,
                            int mode)
{
    if (s->ts_advisory)
        ts_touch_pages(s, p, len, mode);
}

/** The address of byte offset @p off of the file. */
static inline void *ts_at(const struct ts_store *s, uint64_t off)
{
    return s->ts_base + off;
}

static inline uint64_t ts_off(const struct ts_store *s, const void *p)
{
    return (uint64_t)((const char *)p - s->ts_base);
}

#endif
