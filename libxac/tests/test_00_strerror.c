/* test_00_strerror: every return value has its own description. */
#include <errno.h>
#include <string.h>

#include "support/testhelp.h"

int main(void)
{
    static const int codes[] = {
        0,           COMMITTED,      ABORTED,     PENDING,      FAILED,
        XAC_ENOTINIT, XAC_EINIT,     XAC_EINVAL,  XAC_ENOTXN,   XAC_EINTXN,
        XAC_ENOTMAPPED, XAC_EMAPPED, XAC_EBADADDR, XAC_EQUERY,  XAC_ENOTSUP,
        XAC_EBADCTL,  XAC_EBUSY,     XAC_EFULL,   XAC_EIO};
    size_t n = sizeof codes / sizeof codes[0], i, j;
    int distinct = 1, known = 1, named = 1;

    for (i = 0; i < n; i++) {
        const char *s = xStrerror(codes[i]);
        if (s == NULL || strstr(s, "unknown") != NULL)
            known = 0;
        for (j = 0; j < i; j++)
            if (strcmp(s, xStrerror(codes[j])) == 0)
                distinct = 0;
        if (codes[i] < 0 && strncmp(s, "XAC_E", 5) != 0)
            named = 0;
    }
    test_cond("every code has a description", known);
    test_cond("descriptions are distinct", distinct);
    test_cond("library errors are named in their description", named);
    test_cond("XAC_ELAST is the last code",
              XAC_ELAST == XAC_EIO &&
                  strstr(xStrerror(XAC_ELAST - 1), "unknown") != NULL);
    test_cond("errno values use strerror",
              strcmp(xStrerror(ENOMEM), strerror(ENOMEM)) == 0);
    test_cond("status values cannot be errno values",
              COMMITTED >= 4096 && ABORTED >= 4096 && PENDING >= 4096 &&
                  FAILED >= 4096);
    test_cond("unknown values are said to be unknown",
              strstr(xStrerror(123456), "unknown") != NULL &&
                  strstr(xStrerror(-1), "unknown") != NULL);
    test_cond("xVersion names the library",
              strncmp(xVersion(), "libxac ", 7) == 0);
    return test_report();
}
