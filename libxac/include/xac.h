/** @file xac.h
 * @brief LIBXAC: memory-mapped transactions.
 *
 * LIBXAC maps a file into memory and lets a program read and write it inside
 * transactions delimited by xbegin() and xend().  A transaction appears to
 * happen atomically or not at all: when xend() returns COMMITTED its writes
 * are in the file; when it returns ABORTED the file is exactly as before.
 * The program does no explicit locking and no explicit I/O: the library
 * finds out which pages a transaction touches by catching the first access
 * to each page with a SIGSEGV handler, and it keeps the transaction's writes
 * in a private copy of each page until commit.  This is the interface of
 * Jim Sukha's 2005 MIT thesis "Memory-Mapped Transactions" (chapters 2 and 3,
 * appendix A); the names below are the thesis's names.
 *
 * A minimal program (thesis Figure 2-1):
 *
 *     xInit(".", NONDURABLE);
 *     x = (int*)xMmap("input.db", 4096*fileLength);
 *     while (1) {
 *         xbegin();
 *         x[0]++;
 *         if (xend() == COMMITTED) break;
 *     }
 *     xMunmap("input.db");
 *     xShutdown();
 *
 * This header includes <stdlib.h>, <fcntl.h>, <unistd.h> and <sys/mman.h>
 * because the thesis's example programs, which have no #include lines, use
 * rand(), MAP_FAILED and open() and must compile unchanged with
 * "cc -include xac.h".
 *
 * @section status What is implemented
 *
 * NONDURABLE transactions on any number of processes sharing one segment
 * (thesis chapters 2 and 3): page-access detection by SIGSEGV, private
 * copies for writes, multiversion concurrency control, subsumed nesting,
 * setPageAccess(), xValidate(), read-only transactions that never abort
 * and never block writers, selectable conflict policies (xSetPolicy()),
 * recovery from processes that die (even by SIGKILL) inside a
 * transaction, and transactions touching more pages than
 * vm.max_map_count.  DURABLE: a redo log of byte-range diffs with CRC32C,
 * group commit, checkpoints, archiving, recovery at xInit() and xMmap();
 * docs/libxac-durability.md.  docs/libxac.md describes the design and the
 * file formats; docs/libxac-serializability.md argues that the schedules
 * are serializable.
 *
 * @section semantics Concurrency semantics
 *
 * - Every transaction, committed or aborted, sees a consistent snapshot of
 *   the segment: the state after all transactions that committed before it
 *   began.  Committed transactions are serializable in commit order;
 *   read-only transactions (xbeginQuery(), or xbegin() without a write)
 *   serialize at their snapshot.
 * - A transaction fails (xValidate() says FAILED) when it loses a write
 *   conflict under the policy, or touches a page that another transaction
 *   committed after its snapshot.  A failed transaction keeps running on
 *   its snapshot until its outermost xend(), which returns ABORTED: aborts
 *   are synchronous.  Only the segment is rolled back.
 * - Progress: after XAC_ESCALATE (default 8) conflict aborts in a row, a
 *   process's next transaction runs irrevocable and commits, so every
 *   transaction commits within XAC_ESCALATE + 1 attempts (aborts by
 *   xFail(), XAC_EFULL or XAC_EIO aside).  While it runs, other
 *   processes' commits wait in xend().  At most XAC_WRITERS update
 *   transactions (default: the CPUs + 1; durable, twice the CPUs) run at
 *   once, each process for a turn of XAC_TURN_US (default 250 us) of
 *   transactions in a row; another xbegin() waits (see Environment).  Read-only transactions
 *   never wait for either.
 * - A process that dies inside a transaction never blocks the others: its
 *   writer words are recognized as stale, its slot is freed, its
 *   transaction is aborted.  If it dies while holding the commit lock, the
 *   next process to take the lock repairs the shared state (robust mutex).
 *   One exception: a process killed while its commit writes into the data
 *   file in place (possible only while no other transaction runs) leaves
 *   that commit partly written, exactly as the NONDURABLE crash caveat says.
 *
 * @section caveats Caveats
 *
 * - Every process that xMmap()s the file must xInit() the same control
 *   directory.  Committed versions that other processes' running
 *   transactions may still read live in "<dir>/xac.pool" until they are
 *   written back; the last process to xMunmap() writes all of them into
 *   the file, and if every process died, the next xMmap() does.  While
 *   other processes have the segment mapped, reading the file by other
 *   means may show older data.
 * - One transaction per process, and one thread per process may touch the
 *   segment.  Page protections belong to the process, not to a thread
 *   (thesis appendix A.1, item 1): an access by any thread during a
 *   transaction is counted as the transaction's, and an access by another
 *   thread outside a transaction kills the process.
 * - Touching the segment outside a transaction raises SIGSEGV exactly as an
 *   access to a PROT_NONE mapping would, and the process dies (the thesis
 *   calls this "unspecified, usually a fatal program error").  Writing
 *   inside a read-only transaction (xbeginQuery()) also kills the process.
 *   SIGSEGVs for addresses outside the segment go to the handler that was
 *   installed before xInit(), or get the default action, so real bugs still
 *   crash with a core dump.
 * - LIBXAC installs a SIGSEGV handler in xInit() and restores the previous
 *   one in xShutdown().  A program must not replace it in between.  Under
 *   AddressSanitizer run with ASAN_OPTIONS=allow_user_segv_handler=1.
 * - fork(): a child inherits the mapping but not the right to use it.  A
 *   child must not touch the inherited segment or call LIBXAC functions
 *   other than xInit(): xInit() in the child drops the inherited state
 *   (without touching the parent's) and starts afresh, and the child then
 *   calls xMmap() itself, becoming one more process on the segment.  Do
 *   not fork inside a transaction.
 * - Control flow must not leave a transaction without passing xend()
 *   (no return, longjmp or goto out of it).  Only the segment is rolled
 *   back on abort; local variables keep what the transaction wrote.
 * - Do not keep pointers into the segment across xMmap() sessions: the
 *   segment's address changes.  Do not pass segment addresses to system
 *   calls (read(2) into the segment fails with EFAULT instead of faulting
 *   the page in); touch the page first or call setPageAccess().
 * - Remote filesystems: the data file and the control directory must be on
 *   a local filesystem.  NFS and similar do not give the shared-mapping
 *   coherence the multi-process design relies on (same caveat as LMDB).
 * - The file must not be changed by other means (write(2), another
 *   program's mmap) while it is xMmap()ped.  After xShutdown() it is an
 *   ordinary file again.
 * - NONDURABLE means what it says: a crash (of the process or the machine)
 *   during a commit may leave part of that commit in the file.
 * - DURABLE: xend() returns COMMITTED once the transaction's redo record
 *   is on stable storage ("<dir>/xac.log.*"; the data file is brought up
 *   to date by checkpoints and by recovery, which runs by itself).  All
 *   processes on one control directory must use the same flag (xMmap
 *   fails with EBUSY otherwise).  XAC_EIO from xend() means the log could
 *   not be written or synced: the transaction may or may not survive a
 *   crash, and no transaction commits until every process has called
 *   xShutdown() and the file is mapped again (recovery).
 *
 * @section environment Environment
 *
 * xInit() reads these variables, every one whatever its flags (a DURABLE
 * setting is checked in a NONDURABLE process too), before it changes any
 * state.  Unset or empty means the default.  Any other value that is not
 * one the variable takes makes xInit() return XAC_EINVAL and change
 * nothing; it writes one line naming the variable and the values it takes
 * to stderr, and xEnvError() returns that line.  Numbers are decimal,
 * without sign or spaces.
 *
 *   XAC_KEEP_PAGES=0|1 (default 1)
 *       keep pages readable between transactions (xSetKeepPages()).
 *   XAC_UFFD=0|1 (default 1)
 *       may the segment use userfaultfd at all.
 *   XAC_PTE=0|1 (default 1)
 *       may it grant and revoke access through page-table entries rather
 *       than mprotect (needs XAC_UFFD=1 and the kernel's support).
 *   XAC_REUSE=0|1 (default 1)
 *       a fault skips the copy of a version the working memory holds.
 *   XAC_SHARE=0|1 (default 1)
 *       a read-only transaction maps a window of 64 pages whose versions
 *       it reads from the data file straight from the file's page cache,
 *       which every process shares, instead of copying them into its
 *       working memory (page-table access only; xStats() pages_shared).
 *   XAC_WORKING_MIB=1..1048576 (default 256)
 *       MiB of page copies a process holds before it empties its working
 *       memory.
 *   XAC_POLICY=self-abort|oldest-wins|requester-wins|polite
 *       (default self-abort) the conflict policy (xSetPolicy()).
 *   XAC_BACKOFF_US=0..4294967295 (default 0)
 *       maximum backoff after a conflict abort, in us; 0 = no backoff
 *       (xSetPolicy()).
 *   XAC_WRITERS=0..4096 (default 0)
 *       how many update transactions (xbegin()) of the processes on the
 *       control directory run at once; another xbegin() waits until one
 *       of them publishes its commit or aborts, or, within its turn
 *       (XAC_TURN_US), until it is between two transactions.  0 = one
 *       more than the CPUs this process may run on (twice the CPUs for a
 *       DURABLE process); 4096 (the number of process slots) = no limit.  A throttle, not a lock: a process that has
 *       seen no admitted transaction finish for about 20 ms runs anyway,
 *       so transactions that wait for each other across processes cannot
 *       deadlock.  Read-only transactions are never held back.
 *   XAC_TURN_US=0..1000000 (default 250)
 *       an admitted process's turn, in microseconds: its update
 *       transactions that begin within this time of its admission keep
 *       its place among the XAC_WRITERS, without waiting; after the turn
 *       its next xbegin() lets a waiting process in first.  Between two
 *       transactions of a turn the place is held: a process that comes
 *       looking for one, or wakes from a 10 ms wait, takes it over.  A
 *       durable commit leaves at once (it waits for the log).  0 = every
 *       transaction waits anew, as before turns.
 *   XAC_ESCALATE=0..1000 (default 8)
 *       after this many consecutive conflict aborts, a process runs its
 *       next attempt irrevocable: it waits for its turn, and while it
 *       runs no other transaction commits and none wins a page from it,
 *       so it commits (unless its program calls xFail(), the version pool
 *       is full or the log fails).  Every transaction therefore commits
 *       within XAC_ESCALATE + 1 attempts.  0 = never (the thesis's
 *       behaviour: a transaction may abort without bound).
 *   XAC_LOCK_SPIN_US=0..10000 (default 50)
 *       how long a process that finds the commit lock (the mutex of the
 *       control file, held while a commit validates and publishes) held
 *       by another process spins, watching it, before it sleeps in the
 *       kernel until it is free, in microseconds (xStats() lock_busy,
 *       lock_spun).  0 = it sleeps at once, as does a process that may
 *       run on one CPU only (the holder could not run meanwhile) or
 *       that was built against a C library other than glibc.
 *   XAC_HANDOFF_US=0..10000 (default 100)
 *       how long a process whose admission turn (XAC_TURN_US) ended, and
 *       which woke a waiter for its place, yields its CPU (sched_yield)
 *       while the place is still free, in microseconds (xStats()
 *       admission_handoffs).  If the waiter took the place meanwhile, the
 *       process sleeps until a place frees; if not, it takes the place
 *       back and runs on (throughput over fairness: the waiter waits for
 *       a later turn).  0 = it sleeps at once.
 *   XAC_SYNC=fdatasync|fsync|dsync (default fdatasync)
 *       how a DURABLE process makes the log stable (xSetSyncMethod()).
 *   XAC_LOG_LIMIT=4096..2147483648 (default 67108864, that is 64M)
 *       bytes at which a log file is closed and the next one started; a
 *       K, M or G suffix multiplies by 2^10, 2^20 or 2^30.
 *   XAC_COMMIT_DELAY_US=0..4294967295 (default 200)
 *       how long a group-commit leader waits for other processes' running
 *       transactions to reach the log before it syncs, in us; 0 = off.
 *   XAC_LOG_DIRECT=0|1 (default 1)
 *       a process alone on the log writes its commit record with one
 *       O_DIRECT | O_DSYNC write (xSetSyncMethod()).
 *   XAC_LEAD_BY_CPU=0|1 (default 1)
 *       a committer leaves the group-commit lead to a process on a CPU
 *       whose log syncs complete sooner.
 *
 * @section errors Return values
 *
 * Functions that return int return 0 on success.  Library errors are
 * negative XAC_E* codes (below); positive values below 4096 are errno values
 * from a failed system call.  xend(), xValidate() and xendQuery() return one
 * of the transaction status values COMMITTED, ABORTED, PENDING and FAILED,
 * which are 4096 and above so they can never be mistaken for an errno value,
 * or an error code as above.  xStrerror() describes all of them.
 */
#ifndef XAC_H
#define XAC_H

#include <stddef.h>
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Library version, "major.minor.patch". */
#define XAC_VERSION_MAJOR 0
#define XAC_VERSION_MINOR 1
#define XAC_VERSION_PATCH 0

/** The system page size in bytes, as the thesis's example programs use it.
 * xMmap() lengths and setPageAccess() work in units of this size. */
#ifndef PAGESIZE
#define PAGESIZE ((size_t)sysconf(_SC_PAGESIZE))
#endif

/** Flags for xInit(). */
enum {
    NONDURABLE = 1, /**< transactions survive neither crashes nor xShutdown
                     *   without it; commits go to the page cache */
    DURABLE = 2     /**< commits are forced to a redo log before xend()
                     *   returns COMMITTED; see xSetSyncMethod() */
};

/** Transaction status values returned by xend(), xValidate() and
 * xendQuery(). */
enum {
    COMMITTED = 4096, /**< outermost xend(): the transaction's writes are in
                       *   the file */
    ABORTED = 4097,   /**< outermost xend(): the transaction failed; the file
                       *   is unchanged */
    PENDING = 4098,   /**< nested xend() or xValidate(): no conflict seen so
                       *   far */
    FAILED = 4099     /**< nested xend() or xValidate(): the outermost
                       *   transaction will abort */
};

/** Access modes for setPageAccess(). */
enum {
    READ = 1,      /**< the transaction will read the page */
    READ_WRITE = 2 /**< the transaction will read and write the page */
};

/** @defgroup errors Library error codes (all negative)
 * @{ */
#define XAC_ENOTINIT   (-30700) /**< xInit() has not been called */
#define XAC_EINIT      (-30701) /**< xInit() was already called */
#define XAC_EINVAL     (-30702) /**< invalid argument (flag, mode, NULL) */
#define XAC_ENOTXN     (-30703) /**< no transaction in progress */
#define XAC_EINTXN     (-30704) /**< a transaction is in progress */
#define XAC_ENOTMAPPED (-30705) /**< no segment mapped under that name */
#define XAC_EMAPPED    (-30706) /**< the segment is still mapped */
#define XAC_EBADADDR   (-30707) /**< address is not inside the segment */
#define XAC_EQUERY     (-30708) /**< not allowed in a read-only transaction */
#define XAC_ENOTSUP    (-30709) /**< not yet supported by this version */
#define XAC_EBADCTL    (-30710) /**< control file has a wrong magic number,
                                 *   format version or page size */
#define XAC_EBUSY      (-30711) /**< every process slot of the control file
                                 *   (4096) is taken */
#define XAC_EFULL      (-30712) /**< the version pool is full (2 x the
                                 *   segment's pages + 4096 versions are
                                 *   still needed by running transactions);
                                 *   the transaction was aborted */
#define XAC_EIO        (-30713) /**< DURABLE: a write or sync of the log
                                 *   failed.  The transaction is not
                                 *   durable (it may or may not survive a
                                 *   crash) and the log is in the failed
                                 *   state: every later commit, by any
                                 *   process on the control directory, gets
                                 *   XAC_EIO until all of them xShutdown()
                                 *   and the next xMmap() recovers */
#define XAC_ELAST      XAC_EIO
/** @} */

/** Initialize LIBXAC.
 *
 * @param path directory for the control file "xac.ctl" (and, later, log
 *     files).  It is created (mode 0777 & ~umask) if it does not exist.
 * @param flags NONDURABLE or DURABLE.
 * @return 0; XAC_EINIT if already initialized; XAC_EINVAL if path is NULL
 *     or flags is neither NONDURABLE nor DURABLE, or an XAC_* variable of
 *     the environment is malformed (see Environment; xEnvError() says
 *     which); an errno value if recovery (DURABLE, see xRecover())
 *     failed; XAC_EBADCTL if an existing control file is not one this version
 *     understands; XAC_EBUSY if 4096 live processes have the control
 *     directory open; an errno value if the directory or control file
 *     cannot be created, opened or mapped, or the SIGSEGV handler cannot be
 *     installed.
 */
int xInit(const char *path, int flags);

/** Why the most recent xInit() refused the environment: a line such as
 * 'XAC_SYNC="fsink" is not valid: XAC_SYNC takes fdatasync, fsync or
 * dsync (default fdatasync)', the line xInit() also wrote to stderr.
 *
 * @return the line (static storage, valid until the next xInit()), or
 *     NULL if the most recent xInit() did not refuse a variable.
 */
const char *xEnvError(void);

/** Shut LIBXAC down: unmap the segment if the program did not (as
 * xMunmap() would), release the control file and restore the previous
 * SIGSEGV handler.  Afterwards the file may be used by ordinary means.
 *
 * @return 0; XAC_ENOTINIT; XAC_EINTXN inside a transaction (nothing is
 *     done); an errno value if flushing the file failed (LIBXAC is shut
 *     down anyway).
 */
int xShutdown(void);

/** Map the first @p length bytes of file @p name transactionally.
 *
 * The file is created (mode 0666 & ~umask) if it does not exist and
 * extended with zeros to @p length if it is shorter.  The segment starts
 * with no access: every page is fetched on its first touch inside a
 * transaction.  One segment per process (thesis appendix A.1, item 2).
 *
 * @return the segment's address, or MAP_FAILED with errno set to:
 *     EPERM if xInit() has not been called; EINVAL if name is NULL or
 *     length is 0 or not a multiple of PAGESIZE; EBUSY if a segment is
 *     already mapped in this process (whatever its name or length), or if
 *     other processes using the same control directory have another file
 *     or another length mapped; EFBIG if length exceeds
 *     what this version can address (2^32 pages); or the errno of the
 *     failed open(2), ftruncate(2) or mmap(2).
 */
void *xMmap(const char *name, size_t length);

/** Unmap the segment mapped by xMmap(name, ...).  The last process to
 * unmap writes every committed version into the file and syncs it
 * (fdatasync); while others still have it mapped, recent versions may
 * still be in the version pool.
 *
 * @return 0; XAC_ENOTINIT; XAC_EINVAL if name is NULL; XAC_ENOTMAPPED if
 *     no segment is mapped under that name; XAC_EINTXN inside a
 *     transaction; an errno value if flushing failed (the segment is
 *     unmapped anyway).
 */
int xMunmap(const char *name);

/** Begin a transaction.  Inside a transaction, xbegin() begins a nested
 * transaction, which is subsumed by the outermost one.  The outermost
 * xbegin() may first wait: while XAC_WRITERS update transactions run
 * (admission), or for its turn to run irrevocable (after XAC_ESCALATE
 * conflict aborts in a row; see Environment).
 *
 * @return 0; XAC_ENOTINIT; XAC_ENOTMAPPED if no segment is mapped;
 *     XAC_EQUERY inside a read-only transaction; XAC_EIO (DURABLE) while
 *     the log is in the failed state.
 */
int xbegin(void);

/** End a transaction.
 *
 * @return for the outermost transaction COMMITTED or ABORTED; for a nested
 *     one PENDING, or FAILED if the outermost transaction will abort;
 *     XAC_ENOTXN without a matching xbegin(); XAC_EQUERY if the innermost
 *     transaction was begun by xbeginQuery(); XAC_EFULL if the version
 *     pool is full (the transaction aborted); XAC_EIO (DURABLE) if the log
 *     write or sync failed or the log was already failed (the transaction
 *     is over and is not durable; it may or may not be found after a
 *     crash); an errno value if writing the committed pages failed (the
 *     transaction is over; if it was writing into the file in place, the
 *     file may hold part of it).  DURABLE: COMMITTED is returned only once
 *     the transaction's log record is on stable storage.
 *     After ABORTED caused by a conflict, xend() first sleeps a random
 *     time if backoff is on (xSetPolicy()).  While another process's
 *     transaction is irrevocable (XAC_ESCALATE), a commit waits for it
 *     before it validates.
 */
int xend(void);

/** Mark the current transaction FAILED so that the outermost xend()
 * aborts it: the program's own way to roll back (and the tests').
 *
 * @return 0; XAC_ENOTXN outside a transaction.
 */
int xFail(void);

/** Check whether the current transaction has failed (thesis section 2.3):
 * it lost a conflict, or a page it touched has a version committed after
 * its snapshot.  One-sided: FAILED is certain (xend() will return
 * ABORTED), PENDING may still abort at xend().
 *
 * @return PENDING or FAILED; XAC_ENOTXN outside a transaction.
 */
int xValidate(void);

/** Begin a read-only transaction.  It reads a consistent snapshot, always
 * commits, never blocks and never makes a writer fail.  With kept pages
 * (xSetKeepPages(), the default) its pages stay readable after it ends,
 * whatever other processes run, and the next transaction of this process
 * revokes only those that commits changed meanwhile: a query repeated on
 * unchanged pages takes no fault.  Under page-table access a query's
 * fault also maps the pages around the faulting one (xStats()
 * pages_around); where all 64 of them read the data file's versions, it
 * maps them from the file's page cache, one copy for every process, and
 * copies nothing (XAC_SHARE, xStats() pages_shared).  Writing to the
 * segment inside it is a program error: the library prints "libxac: write
 * to the segment in a read-only transaction (xbeginQuery)" on stderr and
 * the process dies of SIGSEGV (the write is never applied).  May be nested in a normal
 * transaction (it then reads with the outer transaction's rights); a
 * normal transaction may not be nested in it.
 *
 * @return 0; XAC_ENOTINIT; XAC_ENOTMAPPED if no segment is mapped.
 */
int xbeginQuery(void);

/** End a read-only transaction.
 *
 * @return COMMITTED for the outermost transaction, PENDING (or FAILED, if
 *     the enclosing normal transaction has failed) when nested;
 *     XAC_ENOTXN without a matching xbeginQuery(); XAC_EQUERY if the
 *     innermost transaction was begun by xbegin().
 */
int xendQuery(void);

/** Advisory function (thesis section 2.3): declare that the current
 * transaction will access the page holding @p addr with @p mode, so that
 * the access takes no SIGSEGV.  It never changes what a transaction
 * computes, only how fast it runs.
 *
 * @return 0; XAC_ENOTXN outside a transaction; XAC_EINVAL if mode is not
 *     READ or READ_WRITE; XAC_EBADADDR if addr is not in the segment;
 *     XAC_EQUERY for READ_WRITE in a read-only transaction; an errno value
 *     if the protection change failed.
 */
int setPageAccess(void *addr, int mode);

/** Conflict policies for xSetPolicy() (thesis section 3.3).  They decide
 * who fails when a transaction writes a page that another running
 * transaction has written.  Reads never conflict with writes at access
 * time (multiversion); a transaction that read or wrote a page that
 * another one committed after its snapshot always fails. */
enum {
    XAC_POLICY_SELF_ABORT = 0,     /**< the requester fails (default) */
    XAC_POLICY_OLDEST_WINS = 1,    /**< the transaction that began first
                                    *   wins; the other fails */
    XAC_POLICY_REQUESTER_WINS = 2, /**< the requester wins and the owner
                                    *   fails: obstruction-free, a
                                    *   transaction running alone always
                                    *   commits */
    XAC_POLICY_POLITE = 3          /**< the requester waits with
                                    *   exponential backoff (1 us .. 0.5 ms,
                                    *   10 tries) for the owner to finish,
                                    *   then wins: obstruction-free */
};

/** Choose this process's conflict policy and backoff.  The defaults come
 * from the environment at xInit(): XAC_POLICY=self-abort | oldest-wins |
 * requester-wins | polite, XAC_BACKOFF_US=maximum (0 = no backoff).
 *
 * @param policy one of XAC_POLICY_*.
 * @param backoff_us if non-zero, an outermost xend() that returns ABORTED
 *     because of a conflict first sleeps a random time up to
 *     min(backoff_us, 2^k us), k = consecutive such aborts (randomized
 *     exponential backoff).  Whatever it is, an xend() whose transaction
 *     lost a page to a running transaction first waits (at most 10 ms)
 *     until that one has ended.
 * @return 0; XAC_ENOTINIT; XAC_EINVAL for an unknown policy; XAC_EINTXN
 *     inside a transaction.
 */
int xSetPolicy(int policy, unsigned backoff_us);

/** Keep pages between transactions (default on; XAC_KEEP_PAGES=0 in the
 * environment at xInit() turns it off).  While this process is the only
 * one attached to the xInit() directory, a transaction's pages stay
 * readable after it ends, holding the committed versions, so the next
 * transaction reads them without a fault, a copy or a protection change;
 * only its first write to such a page faults.  When another process
 * commits, the pages it changed are revoked at the next xbegin(); an
 * update transaction that begins while another process is attached
 * revokes them all, and every page faults again, as the thesis
 * describes.  Read-only transactions (xbeginQuery()) keep their pages
 * whoever else is attached.  Off, every
 * transaction pays the thesis's per-page cost (page_touch measures it
 * that way).  Where the kernel can (Linux 5.19 or later) and XAC_UFFD is
 * not 0, kept pages are write-protected through userfaultfd rather than
 * mprotect, and a write to one raises SIGBUS instead of SIGSEGV; outside
 * a transaction that signal kills the process as SIGSEGV would.  With
 * page-table access (XAC_PTE, the default where the kernel has minor
 * faults on shared memory) every access the library detects raises
 * SIGBUS, whether or not pages are kept.
 *
 * @param on 1 to keep pages, 0 to revoke them at every transaction's end.
 * @return the previous setting; XAC_ENOTINIT; XAC_EINTXN inside a
 *     transaction.
 */
int xSetKeepPages(int on);

/** Sync methods for DURABLE commits (xSetSyncMethod()). */
enum {
    XAC_SYNC_FDATASYNC = 0, /**< fdatasync(2) the log (default) */
    XAC_SYNC_FSYNC = 1,     /**< fsync(2) the log */
    XAC_SYNC_DSYNC = 2      /**< open the log O_DSYNC: every record write
                             *   is synchronous (no group commit) */
};

/** Choose how this process makes the log stable.  The default comes from
 * the environment at xInit(): XAC_SYNC=fdatasync | fsync | dsync (xInit
 * returns XAC_EINVAL for another value).  XAC_LOG_LIMIT=bytes sets the size
 * at which a log file is closed and the next one started (default 64 MiB).
 * XAC_COMMIT_DELAY_US=us (default 200, 0 = off) bounds how long a
 * group-commit leader waits for other processes' running transactions to
 * reach the log before it syncs (never when it is alone).  A process that
 * commits while it is the only one attached writes its record with one
 * O_DIRECT | O_DSYNC write of the record's 512-byte blocks instead of a
 * write and fdatasync (fdatasync and dsync methods; XAC_LOG_DIRECT=0 turns
 * this off, any value but 0 or 1 is XAC_EINVAL at xInit).
 * @return 0; XAC_ENOTINIT; XAC_EINVAL; XAC_EINTXN. */
int xSetSyncMethod(int method);

/** Restore the data file @p name to a consistent state after a crash
 * (DURABLE only): replay every log record after the newest checkpoint into
 * it, sync it and write a checkpoint.  Idempotent: a crash during recovery
 * is recovered by running it again.  Recovery also runs by itself in
 * xInit(DURABLE) (for the file the checkpoint names, when no other process
 * uses the directory) and in the first xMmap() of a file.
 * @return 0; XAC_ENOTINIT; XAC_EINVAL (NONDURABLE, NULL name);
 *     XAC_EMAPPED if a segment is mapped (by any process); an errno
 *     value. */
int xRecover(const char *name);

/** Copy committed versions from the version pool back into the file, as
 * far as running transactions allow (the garbage collection of thesis
 * section 3.2 also runs by itself: at every 16th durable commit of a
 * process, and at nondurable commits once the pool holds more than a
 * quarter of its frames, at most 4,096).  DURABLE: only versions whose log
 * records are stable are copied; then the file is synced and a checkpoint
 * is recorded in "<dir>/xac.ckpt", after which log files before it can be
 * archived.
 * @return 0; XAC_ENOTINIT; XAC_EINTXN inside a transaction; XAC_EIO if
 *     the log is failed; an errno value if copying or syncing failed. */
int xCheckpoint(void);

/** Flag for xArchive(): also delete the files listed. */
#define XAC_ARCHIVE_REMOVE 1

/** List the log files that the newest checkpoint made unnecessary (DURABLE
 * only), like Berkeley DB's log_archive.
 * @param names if not NULL, receives a NULL-terminated array of path names
 *     in one malloc() block: free(*names) frees everything.
 * @param flags 0 or XAC_ARCHIVE_REMOVE (unlink the files listed).
 * @return 0; XAC_ENOTINIT; XAC_EINVAL (NONDURABLE, unknown flag); an errno
 *     value. */
int xArchive(char ***names, int flags);

/** Counters for benchmarks (xStats()).  log_* are totals over every
 * process that used the control directory since its control file was
 * created. */
struct xac_stats {
    unsigned long long commits;        /**< by this process */
    unsigned long long log_bytes_mine; /**< log bytes this process wrote */
    unsigned long long log_bytes;      /**< log record bytes written */
    unsigned long long log_records;    /**< log records written */
    unsigned long long log_syncs;      /**< group-commit syncs */
    unsigned long long log_payload;    /**< changed bytes in the records */
    unsigned long long recoveries;     /**< recoveries run */
    unsigned long long faults;         /**< page faults that granted this
                                        *   process access (SIGSEGVs, and
                                        *   SIGBUSes of write-protected
                                        *   pages) */
    unsigned long long kept_pages;     /**< pages kept readable now
                                        *   (xSetKeepPages) */
    unsigned long long extensions;     /**< times a transaction of this
                                        *   process moved its snapshot
                                        *   forward instead of failing */
    int failed;                        /**< the log is in the failed state */
    int sync_method;                   /**< XAC_SYNC_* of this process */
    int keep_pages;                    /**< xSetKeepPages setting */
    unsigned long long working_mib;    /**< XAC_WORKING_MIB in effect */
    int uffd;                          /**< 1: the mapped segment detects
                                        *   writes to readable pages by
                                        *   userfaultfd write protection
                                        *   (XAC_UFFD); 0: by mprotect */
    unsigned long long direct_commits; /**< of this process's commits,
                                        *   those written straight into the
                                        *   data file: no other transaction
                                        *   was running (DURABLE: no other
                                        *   process had the control
                                        *   directory open either, and the
                                        *   log was synced under the lock);
                                        *   the others went through the
                                        *   version pool */
    unsigned long long log_direct_writes; /**< of this process's direct
                                        *   commits, those whose record
                                        *   went to the log in one
                                        *   O_DIRECT | O_DSYNC write (the
                                        *   write is the sync); the others
                                        *   were written and then synced
                                        *   (XAC_LOG_DIRECT=0, XAC_SYNC=
                                        *   fsync, the file system refused
                                        *   O_DIRECT, the record was over
                                        *   256 KiB, or the log before it
                                        *   was not yet stable) */
    unsigned long long log_leads;      /**< group-commit syncs this process
                                        *   ran as the leader */
    unsigned long long log_deferred;   /**< commits of this process that
                                        *   left the group-commit lead to a
                                        *   process on a CPU whose syncs
                                        *   complete sooner
                                        *   (XAC_LEAD_BY_CPU) */
    unsigned long long pages_reused;   /**< faults of this process that
                                        *   copied nothing: the working
                                        *   memory still held the page's
                                        *   version from an earlier
                                        *   transaction of this process */
    int page_table_access;             /**< 1: the mapped segment grants
                                        *   and revokes access through
                                        *   page-table entries
                                        *   (userfaultfd minor faults and
                                        *   MADV_DONTNEED; XAC_PTE); 0:
                                        *   through mprotect */
    /* Contention: this process's update transactions (xbegin()). */
    unsigned long long conflict_aborts; /**< aborted by a conflict (lost
                                        *   a page under the policy, or
                                        *   read a page committed after
                                        *   its snapshot); not xFail() */
    unsigned long long retries_max;    /**< most conflict aborts before
                                        *   one transaction committed; the
                                        *   mean is conflict_aborts /
                                        *   commits */
    unsigned long long aborted_ns;     /**< time from xbegin() to xend()
                                        *   of the transactions a conflict
                                        *   aborted: work thrown away */
    unsigned long long backoff_ns;     /**< time xend() slept in backoff
                                        *   after them (xSetPolicy()) */
    unsigned long long escalations;    /**< transactions run irrevocable
                                        *   after XAC_ESCALATE aborts */
    unsigned long long admission_waits; /**< xbegin()s that waited to be
                                        *   admitted (XAC_WRITERS) */
    unsigned long long admission_wait_ns; /**< ... and how long */
    unsigned long long admission_overruns; /**< ... and then ran anyway:
                                        *   no admitted transaction had
                                        *   finished for about 20 ms */
    unsigned long long admission_turn_kept; /**< xbegin()s that kept the
                                        *   place of the previous
                                        *   transaction (XAC_TURN_US) */
    unsigned long long admission_taken_over; /**< xbegin()s that took over
                                        *   the place another process
                                        *   held between two transactions
                                        *   of its turn */
    unsigned long long irrevocable_wait_ns; /**< time commits waited for
                                        *   another process's irrevocable
                                        *   transaction, and escalations
                                        *   waited for their turn */
    unsigned long long conflict_pages; /**< pages xConflicts() names */
    unsigned long long conflicts_untracked; /**< conflict aborts on pages
                                        *   beyond the 4096 it keeps, or
                                        *   on no page */
    unsigned long long pages_around;   /**< pages read-only transactions
                                        *   (xbeginQuery()) of this process
                                        *   mapped around a page they
                                        *   faulted on: a query may map
                                        *   any page its snapshot reads,
                                        *   so one fault maps up to 64
                                        *   (page-table access only) */
    int writers;                       /**< XAC_WRITERS in effect (0: no
                                        *   limit) */
    int escalate_after;                /**< XAC_ESCALATE in effect (0:
                                        *   never) */
    int turn_us;                       /**< XAC_TURN_US in effect (0:
                                        *   no turns) */
    unsigned long long pages_shared;   /**< pages read-only transactions
                                        *   of this process mapped straight
                                        *   from the data file's page cache
                                        *   (one copy for every process)
                                        *   instead of copying them into
                                        *   the working memory: 64 per
                                        *   fault on a window whose pages
                                        *   all read the file's version
                                        *   (XAC_SHARE; page-table access
                                        *   only) */
    unsigned long long pages_copied;   /**< pages this process copied
                                        *   into its working memory when
                                        *   it gave a transaction access (a
                                        *   fault or setPageAccess()): a
                                        *   snapshot version read from the
                                        *   data file or the version
                                        *   pool.  Each process keeps its
                                        *   own copies, so a page another
                                        *   process committed since this
                                        *   one last read it is copied
                                        *   again: with more processes,
                                        *   more of the pages a transaction
                                        *   reads are stale, and copies per
                                        *   commit rise (pages_reused
                                        *   counts the grants that copied
                                        *   nothing) */
    unsigned long long lock_busy;      /**< times this process found the
                                        *   commit lock (the control
                                        *   file's mutex) held by another */
    unsigned long long lock_spun;      /**< ... and took it within its
                                        *   spin (XAC_LOCK_SPIN_US),
                                        *   without sleeping in the
                                        *   kernel */
    int lock_spin_us;                  /**< XAC_LOCK_SPIN_US in effect (0:
                                        *   no spinning, also on one
                                        *   CPU) */
    unsigned long long admission_handoffs; /**< turn ends at which this
                                        *   process yielded its CPU to the
                                        *   waiter it woke before it slept
                                        *   (XAC_HANDOFF_US) */
    int handoff_us;                    /**< XAC_HANDOFF_US in effect (0: it
                                        *   sleeps at once) */
    unsigned long long pages_new;      /**< of pages_copied, the copies
                                        *   into a page of the working
                                        *   memory this process did not
                                        *   have yet (none since xMmap or
                                        *   since the memory was emptied,
                                        *   XAC_WORKING_MIB): the kernel
                                        *   allocates and zeroes a page
                                        *   for each, and such a copy
                                        *   costs about four times one
                                        *   into a page it has.  With many
                                        *   processes each comes back to
                                        *   fewer of the pages it holds:
                                        *   random B+-tree inserts copy
                                        *   0.35 new pages a commit at 2
                                        *   processes, 1.2 at 64 */
    unsigned long long gc_versions_walked; /**< versions this process's
                                        *   collections passed over, under
                                        *   the commit lock, looking for
                                        *   the newest that every running
                                        *   snapshot reads (the one to copy
                                        *   into the data file) */
    unsigned long long gc_skipped;     /**< collections of this process
                                        *   that walked no version at all:
                                        *   every page with versions in the
                                        *   pool had been collected already
                                        *   for the same oldest running
                                        *   snapshot, so none held a
                                        *   version that snapshot reads.  A
                                        *   process descheduled inside a
                                        *   transaction holds that snapshot
                                        *   still while the others commit */
};

/** Fill @p st.  @return 0; XAC_EINVAL; XAC_ENOTINIT. */
int xStats(struct xac_stats *st);

/** A page and the conflict aborts blamed on it (xConflicts()). */
struct xac_conflict {
    unsigned long long page;   /**< page number in the segment: byte
                                *   offset / PAGESIZE */
    unsigned long long aborts; /**< this process's transactions a conflict
                                *   on the page aborted */
};

/** Which pages make this process's transactions abort, most aborts
 * first.  Each conflict abort (xStats().conflict_aborts) is blamed on one
 * page: the page whose writer word it lost, the page another transaction
 * took from it, or the first page it had read that another transaction
 * committed after its snapshot.  A program that knows what its pages
 * hold (a tree's root, its inner nodes, an allocator record) can tell
 * which of its records are hot spots.  Counts start at xInit().
 *
 * @param out room for @p n entries (may be NULL if n is 0).
 * @param n how many to fill.
 * @return the number of pages with conflicts counted (it may exceed n:
 *     then out holds the n with the most aborts); XAC_ENOTINIT; XAC_EINVAL
 *     if n is negative or out is NULL with n > 0; ENOMEM.
 */
int xConflicts(struct xac_conflict *out, int n);

/** Describe a value returned by any LIBXAC function: 0, a status value, an
 * XAC_E* code or an errno value.  Never returns NULL; the string is static
 * (errno values use strerror(), which is not thread-safe). */
const char *xStrerror(int code);

/** Version string, e.g. "libxac 0.1.0". */
const char *xVersion(void);

#ifdef __cplusplus
}
#endif

#endif /* XAC_H */
