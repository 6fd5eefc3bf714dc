/* test_01_misuse: wrong calls return the documented codes. */
#include <errno.h>
#include <unistd.h>
#include <string.h>

#include "support/testhelp.h"
#include "support/tutil.h"

int main(void)
{
    int *x;
    int fd;
    char junk[64];

    tu_tmpdir();

    test_cond("xbegin before xInit", xbegin() == XAC_ENOTINIT);
    test_cond("xend before xInit", xend() == XAC_ENOTXN);
    errno = 0;
    test_cond("xMmap before xInit",
              xMmap("a.db", 4096) == MAP_FAILED && errno == EPERM);
    test_cond("xMunmap before xInit", xMunmap("a.db") == XAC_ENOTINIT);
    test_cond("xShutdown before xInit", xShutdown() == XAC_ENOTINIT);
    test_cond("xCheckpoint before xInit", xCheckpoint() == XAC_ENOTINIT);
    test_cond("xInit with no path", xInit(NULL, NONDURABLE) == XAC_EINVAL);
    test_cond("xInit with a bad flag", xInit(".", 0) == XAC_EINVAL);
    {
        static const char *const bad[][2] = {
            {"XAC_KEEP_PAGES", "yes"},  {"XAC_KEEP_PAGES", "2"},
            {"XAC_UFFD", "on"},         {"XAC_UFFD", "-1"},
            {"XAC_PTE", "yes"},         {"XAC_PTE", "10"},
            {"XAC_WORKING_MIB", "0"},   {"XAC_WORKING_MIB", "-5"},
            {"XAC_WORKING_MIB", "12x"}, {"XAC_WORKING_MIB", "1048577"},
            {"XAC_WORKING_MIB", "99999999999999999999999"}};
        size_t i;
        int all = 1;
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            setenv(bad[i][0], bad[i][1], 1);
            all = all && xInit("envctl", NONDURABLE) == XAC_EINVAL;
            unsetenv(bad[i][0]);
        }
        test_cond("xInit refuses malformed XAC_KEEP_PAGES, XAC_UFFD, "
                  "XAC_PTE and XAC_WORKING_MIB",
                  all);
        test_cond("... and creates nothing", access("envctl", F_OK) != 0);
    }
    test_cond("xRecover before xInit", xRecover("a.db") == XAC_ENOTINIT);
    test_cond("xArchive before xInit", xArchive(NULL, 0) == XAC_ENOTINIT);

    test_cond("xInit", xInit("ctl", NONDURABLE) == 0);
    test_cond("xInit twice", xInit("ctl", NONDURABLE) == XAC_EINIT);
    test_cond("xbegin without a segment", xbegin() == XAC_ENOTMAPPED);
    errno = 0;
    test_cond("xMmap of length 0",
              xMmap("a.db", 0) == MAP_FAILED && errno == EINVAL);
    errno = 0;
    test_cond("xMmap of a length that is not whole pages",
              xMmap("a.db", PAGESIZE + 1) == MAP_FAILED && errno == EINVAL);
    errno = 0;
    test_cond("xMmap of no name",
              xMmap(NULL, PAGESIZE) == MAP_FAILED && errno == EINVAL);
    x = xMmap("a.db", 4 * PAGESIZE);
    test_cond("xMmap", x != MAP_FAILED);
    test_cond("xMmap created the file at its length",
              tu_size("a.db") == (off_t)(4 * PAGESIZE));
    errno = 0;
    test_cond("second xMmap of another length",
              xMmap("a.db", 8 * PAGESIZE) == MAP_FAILED && errno == EBUSY);
    errno = 0;
    test_cond("second xMmap of another file",
              xMmap("b.db", 4 * PAGESIZE) == MAP_FAILED && errno == EBUSY);
    test_cond("xend without xbegin", xend() == XAC_ENOTXN);
    test_cond("xendQuery without xbeginQuery", xendQuery() == XAC_ENOTXN);
    test_cond("xValidate outside a transaction", xValidate() == XAC_ENOTXN);
    test_cond("xFail outside a transaction", xFail() == XAC_ENOTXN);
    test_cond("setPageAccess outside a transaction",
              setPageAccess(x, READ) == XAC_ENOTXN);
    test_cond("xMunmap of another name", xMunmap("b.db") == XAC_ENOTMAPPED);
    test_cond("xMunmap of no name", xMunmap(NULL) == XAC_EINVAL);

    test_cond("xbegin", xbegin() == 0);
    test_cond("setPageAccess with a bad mode",
              setPageAccess(x, 7) == XAC_EINVAL);
    test_cond("setPageAccess below the segment",
              setPageAccess((char *)x - 1, READ) == XAC_EBADADDR);
    test_cond("setPageAccess past the segment",
              setPageAccess((char *)x + 4 * PAGESIZE, READ) == XAC_EBADADDR);
    test_cond("xMunmap inside a transaction",
              xMunmap("a.db") == XAC_EINTXN);
    test_cond("xShutdown inside a transaction", xShutdown() == XAC_EINTXN);
    test_cond("xCheckpoint inside a transaction",
              xCheckpoint() == XAC_EINTXN);
    test_cond("xendQuery closing xbegin", xendQuery() == XAC_EQUERY);
    test_cond("xbeginQuery nested in xbegin", xbeginQuery() == 0);
    test_cond("xbegin nested in xbeginQuery", xbegin() == XAC_EQUERY);
    test_cond("xend closing xbeginQuery", xend() == XAC_EQUERY);
    test_cond("setPageAccess READ_WRITE in a query",
              setPageAccess(x, READ_WRITE) == XAC_EQUERY);
    test_cond("nested xendQuery", xendQuery() == PENDING);
    test_cond("outer xend", xend() == COMMITTED);
    test_cond("xend after the transaction ended", xend() == XAC_ENOTXN);
    test_cond("xCheckpoint", xCheckpoint() == 0);
    test_cond("xMunmap", xMunmap("a.db") == 0);
    test_cond("xMunmap twice", xMunmap("a.db") == XAC_ENOTMAPPED);
    test_cond("xShutdown", xShutdown() == 0);
    test_cond("xShutdown twice", xShutdown() == XAC_ENOTINIT);

    /* A control file this version does not understand is refused. */
    fd = open("ctl/xac.ctl", O_WRONLY | O_TRUNC);
    memset(junk, 0x5a, sizeof junk);
    test_cond("corrupt the control file",
              fd >= 0 && write(fd, junk, sizeof junk) == (ssize_t)sizeof junk);
    close(fd);
    test_cond("xInit refuses a bad magic number",
              xInit("ctl", NONDURABLE) == XAC_EBADCTL);
    test_cond("xInit in a directory that cannot be made",
              xInit("ctl/xac.ctl/sub", NONDURABLE) == ENOTDIR);
    test_cond("xInit after failures", xInit("ctl2", NONDURABLE) == 0);
    test_cond("xShutdown after failures", xShutdown() == 0);
    return test_report();
}
