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
 * @section status What is implemented (version 0.1)
 *
 * One process, NONDURABLE transactions, one segment: page-access detection
 * by SIGSEGV, private copies for writes, commit into the file, abort,
 * subsumed nesting, setPageAccess(), xValidate(), read-only transactions,
 * and transactions touching more pages than vm.max_map_count.  The shared
 * control file that multi-process transactions will use is created and
 * checked (magic number, format version, process slots), but concurrent
 * transactions on several processes are not yet supported.  DURABLE,
 * xRecover() and xArchive() return XAC_ENOTSUP.  docs/libxac.md describes
 * the design and the file formats.
 *
 * @section caveats Caveats
 *
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
 *   child must not touch the segment or call LIBXAC functions other than
 *   xInit() after calling exec() (or leave with _exit()).  Do not fork
 *   inside a transaction.
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
    DURABLE = 2     /**< commits are forced to a log (not yet supported) */
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
#define XAC_EBUSY      (-30711) /**< another live process uses the control
                                 *   directory (multi-process not yet
                                 *   supported) */
#define XAC_ELAST      XAC_EBUSY
/** @} */

/** Initialize LIBXAC.
 *
 * @param path directory for the control file "xac.ctl" (and, later, log
 *     files).  It is created (mode 0777 & ~umask) if it does not exist.
 * @param flags NONDURABLE or DURABLE.
 * @return 0; XAC_EINIT if already initialized; XAC_EINVAL if path is NULL
 *     or flags is neither NONDURABLE nor DURABLE; XAC_ENOTSUP for DURABLE;
 *     XAC_EBADCTL if an existing control file is not one this version
 *     understands; XAC_EBUSY if another live process has the control
 *     directory open; an errno value if the directory or control file
 *     cannot be created, opened or mapped, or the SIGSEGV handler cannot be
 *     installed.
 */
int xInit(const char *path, int flags);

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
 *     already mapped (whatever its name or length); EFBIG if length exceeds
 *     what this version can address (2^32 pages); or the errno of the
 *     failed open(2), ftruncate(2) or mmap(2).
 */
void *xMmap(const char *name, size_t length);

/** Unmap the segment mapped by xMmap(name, ...) and make sure its
 * committed contents are in the file (fdatasync).
 *
 * @return 0; XAC_ENOTINIT; XAC_EINVAL if name is NULL; XAC_ENOTMAPPED if
 *     no segment is mapped under that name; XAC_EINTXN inside a
 *     transaction; an errno value if flushing failed (the segment is
 *     unmapped anyway).
 */
int xMunmap(const char *name);

/** Begin a transaction.  Inside a transaction, xbegin() begins a nested
 * transaction, which is subsumed by the outermost one.
 *
 * @return 0; XAC_ENOTINIT; XAC_ENOTMAPPED if no segment is mapped;
 *     XAC_EQUERY inside a read-only transaction.
 */
int xbegin(void);

/** End a transaction.
 *
 * @return for the outermost transaction COMMITTED or ABORTED; for a nested
 *     one PENDING, or FAILED if the outermost transaction will abort;
 *     XAC_ENOTXN without a matching xbegin(); XAC_EQUERY if the innermost
 *     transaction was begun by xbeginQuery(); an errno value if writing the
 *     committed pages to the file failed (the transaction is over; the file
 *     may hold part of it).
 */
int xend(void);

/** Mark the current transaction FAILED so that the outermost xend()
 * aborts it: the program's own way to roll back (and the tests').
 *
 * @return 0; XAC_ENOTXN outside a transaction.
 */
int xFail(void);

/** Check whether the current transaction has failed (thesis section 2.3).
 * One-sided: FAILED is certain, PENDING may still abort at xend().
 *
 * @return PENDING or FAILED; XAC_ENOTXN outside a transaction.
 */
int xValidate(void);

/** Begin a read-only transaction.  It always commits; writing to the
 * segment inside it kills the process.  May be nested in a normal
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

/** Restore the file to a consistent state after a crash (DURABLE only).
 * @return XAC_ENOTSUP in this version. */
int xRecover(const char *name);

/** Copy committed versions of pages back into the file.  NONDURABLE
 * commits already write into the file, so there is nothing to copy.
 * @return 0; XAC_ENOTINIT; XAC_EINTXN inside a transaction. */
int xCheckpoint(void);

/** Report which log files are no longer needed (DURABLE only).
 * @return XAC_ENOTSUP in this version. */
int xArchive(void);

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
