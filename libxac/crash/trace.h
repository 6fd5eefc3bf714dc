/* trace.h: the file-system trace the power-loss recorder writes
 * (crash/shim/recorder.c, preloaded into the process under test) and the
 * replayer reads (crash/power.c).  docs/crash-consistency.md.
 *
 * The recorder watches one directory (XACLAB_CRASH_DIR, absolute) and
 * appends one record per call that changes what a file in it holds or
 * which names it has, in the order the calls returned, to the trace file
 * XACLAB_CRASH_TRACE.  Files are named by a number the recorder gives each
 * file it saw created (fid), so renames, unlinks and inode reuse cannot
 * confuse them.  A record is struct xt_rec, followed by len bytes of
 * payload for XT_WRITE (the data), XT_CREATE, XT_MKDIR, XT_UNLINK (the name
 * relative to the directory, NUL-terminated) and XT_RENAME (two names,
 * each NUL-terminated).  The process under test adds its own marks
 * (xaclab_trace_mark) between them.
 */
#ifndef XC_TRACE_H
#define XC_TRACE_H

#include <stdint.h>

enum xt_type {
    XT_WRITE = 1,  /* fid, off, len: data written (payload) */
    XT_ZERO,       /* fid, off, len: zeros written (no payload) */
    XT_SIZE,       /* fid, off: the file's size set (truncate, fallocate) */
    XT_SYNC,       /* fid: fsync, fdatasync, msync(MS_SYNC), O_SYNC write */
    XT_SYNC_ALL,   /* sync(), syncfs(), fsync of the directory */
    XT_CREATE,     /* fid, name: a new file */
    XT_MKDIR,      /* name: a new directory */
    XT_UNLINK,     /* name */
    XT_RENAME,     /* old name, new name */
    XT_MARK        /* aux: the mark (XT_MARK_*), off: its argument */
};

enum xt_mark {
    XT_MARK_READY = 1, /* the store is made and open: crash points start */
    XT_MARK_BEGIN,     /* off = key index: its insert starts */
    XT_MARK_ACK        /* off = key index: its insert returned, committed */
};

struct xt_rec {
    uint32_t type;
    uint32_t fid;
    uint64_t off;
    uint64_t len; /* payload bytes (XT_ZERO: bytes of zeros, no payload) */
    uint64_t aux;
};

/* The recorder's mark call, found with dlsym (absent when not recording). */
typedef void (*xt_mark_fn)(uint32_t mark, uint64_t arg);
#define XT_MARK_SYMBOL "xaclab_trace_mark"

#endif
