/* xac_txn.h: the transaction of this process (xac_txn.c: begin, end,
 * nesting, kept pages, the advisory function; its commit is
 * xac_commit.c's). */
#ifndef XAC_TXN_H
#define XAC_TXN_H

#include <stddef.h>
#include <stdint.h>

/* Per-page state of the current transaction (one byte a page). */
enum xac_pstate {
    XP_NONE = 0,  /* not touched: PROT_NONE */
    XP_READ = 1,  /* in the readset: PROT_READ, holds the snapshot version */
    XP_WRITE = 2, /* in the writeset: PROT_READ|PROT_WRITE, our copy */
    XP_LEVEL = 3, /* mask of the two above */
    XP_KEPT = 4,  /* flag, level XP_NONE: kept from an earlier transaction
                   * (xSetKeepPages): PROT_READ (or read-write under
                   * write protection, xac_wp.c), holds the version current
                   * at tx_kept_stamp, not in the current readset */
    XP_OWN = 8,   /* flag: we hold the page's writer word */
    XP_LISTED = 16, /* flag: the page is in tx_kept */
    XP_WP = 32,   /* flag: the page's table entry may carry a userfaultfd
                   * write protection (xac_wp.c); survives every state */
    XP_FILE = 64  /* flag, with XP_KEPT: the page's window is mapped from
                   * the data file (xac_share.c) */
};

/* Flags a page keeps when its transaction state is reset. */
#define XP_STICKY (XP_LISTED | XP_WP)
/* Kept pages an update transaction starts with while other processes are
 * attached (xac_txn.c, txn_start); above, it starts with none, unless no
 * commit happened since they were kept (the others only read). */
#define XTX_KEEP_SHARED 64

struct xtxn {
    /* Bookkeeping sized to the segment but sparse (xMmap allocates it):
     * anonymous MAP_NORESERVE mappings, so only the parts a transaction
     * touches take memory. */
    uint8_t *tx_pstate;       /* enum xac_pstate per page */
    uint32_t *tx_touched;     /* pages whose state left XP_NONE, in order */
    size_t tx_ntouched;
    size_t tx_tcap;           /* capacity of tx_touched, in entries */
    int tx_tsorted;           /* tx_touched is strictly increasing */
    uint32_t *tx_kept;        /* pages flagged XP_LISTED (some no longer
                               * XP_KEPT); the second half of the
                               * tx_touched allocation */
    size_t tx_nkept;
    uint64_t tx_kept_stamp;   /* kept pages hold the versions current at
                               * this commit stamp */
    int tx_keep;              /* xSetKeepPages */

    uint64_t tx_id;           /* global id of the outermost transaction */
    uint64_t tx_snap;         /* its snapshot (commit clock at begin) */
    int tx_update;            /* outermost is xbegin (not xbeginQuery) */
    int tx_failed;            /* the transaction will abort */
    int tx_conflict;          /* failed because of a conflict */
    int tx_depth;             /* nesting depth, 0 outside transactions */
    int tx_qdepth;            /* depth of the outermost xbeginQuery, or 0 */
    uint64_t tx_committed_at; /* stamp the last commit published, 0 if it
                               * published nothing */

    int tx_policy;            /* XAC_POLICY_* (its backoff: xac_contend.h) */

    unsigned long tx_commits;    /* commits by this process (stats) */
    unsigned long tx_direct;     /* ... of them written in place (stats) */
    unsigned long tx_extensions; /* snapshots moved forward (stats) */
};

/* Bytes of the one allocation that holds tx_touched and, after it,
 * tx_kept. */
static inline size_t xtxn_lists_bytes(const struct xtxn *tx)
{
    return 2 * tx->tx_tcap * sizeof *tx->tx_touched;
}

#endif
