/* result.h: emit benchmark results in the xaclab result format, version 1.
 *
 * The format is defined once, in docs/result-format.md and
 * docs/result-format.schema.json.  Every benchmark program builds a result
 * with these calls and prints it as one JSON line on stdout.  Nothing else
 * may go to stdout; diagnostics belong on stderr.
 *
 *   xb_result *r = xb_result_new("page-touch", "page_touch", "libxac",
 *                                "time_per_page", "us", XB_LOWER);
 *   xb_param_int(r, "n", 64);
 *   xb_param_str(r, "access", "write");
 *   xb_sample(r, 4.2);  ...
 *   xb_result_emit(r);   // prints the line and frees r
 *
 * A result prints its raw samples, up to XB_HIST_RAW_MAX (100,000) of
 * them.  From the 100,001st sample on it keeps, and prints, a mergeable
 * histogram instead (histogram.h) with the exact count, min, max and sums,
 * so a benchmark may record any number of samples in bounded memory
 * without doing anything different.
 *
 * Out-of-memory and non-finite samples abort the program with a message:
 * a benchmark that cannot record what it measured must not print a
 * partial line.  So does a histogram whose sums overflow a double or that
 * fills more than 65,536 buckets (values spread over 2^512).
 */
#ifndef XB_RESULT_H
#define XB_RESULT_H

#include <stddef.h>

typedef struct xb_result xb_result;

enum xb_better { XB_LOWER, XB_HIGHER };

xb_result *xb_result_new(const char *suite, const char *benchmark,
                         const char *sut, const char *metric,
                         const char *unit, enum xb_better better);
void xb_param_int(xb_result *r, const char *key, long long value);
void xb_param_num(xb_result *r, const char *key, double value);
void xb_param_str(xb_result *r, const char *key, const char *value);
void xb_param_bool(xb_result *r, const char *key, int value);
void xb_sample(xb_result *r, double value);
/* Samples recorded so far, raw or in the histogram. */
size_t xb_sample_count(const xb_result *r);
/* Print the result as one line on stdout, flush, and free it. */
void xb_result_emit(xb_result *r);
/* Free without printing. */
void xb_result_free(xb_result *r);

#endif
