/* histogram.h: the mergeable histogram of the result format, scheme
 * "log2-128" (docs/result-format.md, "Histograms").
 *
 * A result with more than XB_HIST_RAW_MAX samples carries a histogram
 * instead of its raw samples; result.c builds it, so benchmark programs
 * never call this directly unless they merge histograms of their own.
 *
 * Buckets.  Every power of two [2^e, 2^(e+1)) is split into 128 buckets of
 * equal width 2^e/128.  The bucket of a finite double x is
 *
 *     index(x) =      bits(|x|) >> 45    for x >= 0   (0 .. 262015)
 *     index(x) = -1 - (bits(|x|) >> 45)  for x <  0   (-262016 .. -1)
 *
 * where bits() is the IEEE 754 binary64 pattern: the index is the 11
 * exponent bits and the top 7 fraction bits, so it is computed exactly and
 * identically on every machine, and index() never decreases as x grows.
 * -0.0 counts as 0.0.  Bucket i >= 0 holds [low(i), high(i)), bucket i < 0
 * the mirror image (-high(-1-i), -low(-1-i)].  Because the boundaries are
 * fixed, two histograms of the same metric merge by adding the counts of
 * equal indices (xb_hist_merge).
 *
 * Error bound.  A bucket's midpoint is within 2^-8 (0.39 %) of every
 * normal number in it (|x| >= 2^-1022), relative to that number; the
 * server reports a quantile as the midpoint of the bucket that holds it,
 * clamped to [min, max].  count, min and max are exact; sum and
 * sum_squares are the exactly rounded sums of the values and of their
 * squares (Shewchuk's algorithm, the one Python's math.fsum uses; each
 * square is split exactly with fma), so the mean is exact.
 *
 *   struct xb_hist h;
 *   xb_hist_init(&h);
 *   if (xb_hist_add(&h, 4.2) != 0) ...   // ENOMEM
 *   ...
 *   xb_hist_free(&h);
 */
#ifndef XB_HISTOGRAM_H
#define XB_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#define XB_HIST_SCHEME "log2-128"
#define XB_HIST_SUB_BITS 7          /* 2^7 = 128 buckets per power of two */
#define XB_HIST_INDEX_MIN (-262016) /* -1 - index(largest finite double) */
#define XB_HIST_INDEX_MAX 262015    /* index(largest finite double) */
#define XB_HIST_MAX_BUCKETS 65536   /* non-empty buckets a result may carry */
#define XB_HIST_RAW_MAX 100000      /* above this many samples: a histogram */
#define XB_HIST_MAX_COUNT 9007199254740991ULL /* 2^53 - 1, exact in JSON */

/* An exactly rounded running sum: Shewchuk's non-overlapping partials,
 * smallest first.  At most about 40 are ever needed for doubles. */
#define XB_FSUM_PARTIALS 64
struct xb_fsum {
    double fs_p[XB_FSUM_PARTIALS];
    int fs_n;
    int fs_overflow; /* an intermediate sum was not finite */
};

struct xb_hist {
    uint64_t xh_count;
    double xh_min, xh_max;
    struct xb_fsum xh_sum, xh_sum_squares;
    int32_t xh_lo;       /* the index of xh_counts[0] */
    size_t xh_len;       /* xh_counts covers xh_lo .. xh_lo + xh_len - 1 */
    uint64_t *xh_counts; /* dense; NULL while empty */
};

void xb_fsum_init(struct xb_fsum *s);
void xb_fsum_add(struct xb_fsum *s, double x);
/* The exactly rounded sum; NaN if it (or an intermediate sum) overflowed. */
double xb_fsum_value(const struct xb_fsum *s);

int32_t xb_hist_index(double x);
/* The bounds of bucket i >= 0: [low, high); high of the top bucket is
 * +inf.  For i < 0 they are -high(-1-i) and -low(-1-i). */
double xb_hist_low(int32_t index);
double xb_hist_high(int32_t index);
/* The midpoint of bucket i (the top bucket's is +inf, its negative -inf). */
double xb_hist_mid(int32_t index);

void xb_hist_init(struct xb_hist *h);
/* Add one finite value; 0, or ENOMEM (h unchanged). */
int xb_hist_add(struct xb_hist *h, double x);
/* Add every bucket, count and sum of src to dst; 0, or ENOMEM (dst
 * unchanged). */
int xb_hist_merge(struct xb_hist *dst, const struct xb_hist *src);
/* The count in bucket i (0 outside the range in use). */
uint64_t xb_hist_bucket(const struct xb_hist *h, int32_t index);
/* How many buckets are non-empty. */
size_t xb_hist_nonempty(const struct xb_hist *h);
void xb_hist_free(struct xb_hist *h);

#endif
