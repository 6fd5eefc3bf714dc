/* xac_assert.h: assertions in the Varnish vas.h style.
 *
 *   AZ(call)     the call must return zero
 *   AN(expr)     the expression must be non-zero / non-NULL
 *   XASSERT(c)   the condition must hold
 *   WRONG("why") this path is impossible
 *
 * They stay on in release builds: a broken invariant in the fault handler
 * must stop the program, not corrupt the file.  The failure path uses only
 * write(2) and abort(), so it is safe inside the SIGSEGV handler.
 */
#ifndef XAC_ASSERT_H
#define XAC_ASSERT_H

void xac_assert_fail(const char *func, const char *file, int line,
                     const char *cond) __attribute__((noreturn));

#define XASSERT(c)                                                         \
    do {                                                                   \
        if (__builtin_expect(!(c), 0))                                     \
            xac_assert_fail(__func__, __FILE__, __LINE__, #c);             \
    } while (0)
#define AZ(e) XASSERT((e) == 0)
#define AN(e) XASSERT((e) != 0)
#define WRONG(why) xac_assert_fail(__func__, __FILE__, __LINE__, why)

#endif
