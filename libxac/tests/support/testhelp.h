/* testhelp.h: the unit-test harness, after Redis src/testhelp.h.
 *
 *   test_cond("commit is visible", value == 42);
 *   ...
 *   return test_report();
 *
 * test_cond prints one line per check; test_report prints the final line
 * "N passed, N failed" alone and returns the exit status (1 if any check
 * failed).  E(expr) is LMDB mtest.c's: it aborts with file, line and
 * xStrerror() unless the LIBXAC call returns 0.  E_ALLOC(p) aborts with file
 * and line if an allocation gave p == NULL: a test out of memory stops with
 * a message, not a crash (written out at the call, not in a function, so
 * gcc's analyser follows the abort).
 */
#ifndef XAC_TESTHELP_H
#define XAC_TESTHELP_H

#include <stdio.h>
#include <stdlib.h>

#include "xac.h"

extern int test_failed, test_num;

#define test_cond(descr, _c)                                               \
    do {                                                                   \
        test_num++;                                                        \
        if (_c) {                                                          \
            printf("%d - %s: PASSED\n", test_num, descr);                  \
        } else {                                                           \
            printf("%d - %s: FAILED (%s:%d)\n", test_num, descr, __FILE__, \
                   __LINE__);                                              \
            test_failed++;                                                 \
        }                                                                  \
        fflush(stdout);                                                    \
    } while (0)

#define test_report()                                                      \
    (printf("%d passed, %d failed\n", test_num - test_failed, test_failed), \
     fflush(stdout), test_failed ? 1 : 0)

#define E(expr)                                                            \
    do {                                                                   \
        int e_rc_ = (expr);                                                \
        if (e_rc_ != 0) {                                                  \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr,  \
                    xStrerror(e_rc_));                                     \
            abort();                                                       \
        }                                                                  \
    } while (0)

#define E_ALLOC(p)                                                         \
    do {                                                                   \
        if ((p) == NULL) {                                                 \
            fprintf(stderr, "%s:%d: %s: out of memory\n", __FILE__,        \
                    __LINE__, #p);                                         \
            abort();                                                       \
        }                                                                  \
    } while (0)

#endif
