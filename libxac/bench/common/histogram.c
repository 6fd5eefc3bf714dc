/* histogram.c: the "log2-128" histogram of the result format (see
 * histogram.h). */
#include "histogram.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SHIFT (52 - XB_HIST_SUB_BITS)
#define RANGE ((int64_t)XB_HIST_INDEX_MAX - XB_HIST_INDEX_MIN + 1)

void xb_fsum_init(struct xb_fsum *s)
{
    memset(s, 0, sizeof *s);
}

/* Shewchuk's msum, as in CPython's math.fsum: keep x as non-overlapping
 * partials whose sum is exact. */
void xb_fsum_add(struct xb_fsum *s, double x)
{
    int i = 0;
    if (s->fs_overflow)
        return;
    for (int j = 0; j < s->fs_n; j++) {
        double y = s->fs_p[j];
        if (fabs(x) < fabs(y)) {
            double t = x;
            x = y;
            y = t;
        }
        double hi = x + y;
        double lo = y - (hi - x);
        if (lo != 0.0)
            s->fs_p[i++] = lo;
        x = hi;
    }
    /* Finite partials never overlap, so fewer than 40 are ever needed; a
     * full array means the sum overflowed. */
    if (!isfinite(x) || i == XB_FSUM_PARTIALS) {
        s->fs_overflow = 1;
        return;
    }
    s->fs_p[i++] = x;
    s->fs_n = i;
}

double xb_fsum_value(const struct xb_fsum *s)
{
    int n = s->fs_n;
    double hi = 0.0, lo = 0.0;
    if (s->fs_overflow)
        return NAN;
    if (n == 0)
        return 0.0;
    hi = s->fs_p[--n];
    /* Add from the top until the sum becomes inexact. */
    while (n > 0) {
        double x = hi, y = s->fs_p[--n];
        hi = x + y;
        lo = y - (hi - x);
        if (lo != 0.0)
            break;
    }
    /* Round half to even across the remaining partials, as CPython does. */
    if (n > 0 && ((lo < 0.0 && s->fs_p[n - 1] < 0.0) ||
                  (lo > 0.0 && s->fs_p[n - 1] > 0.0))) {
        double y = lo * 2.0;
        double x = hi + y;
        if (y == x - hi)
            hi = x;
    }
    return hi;
}

int32_t xb_hist_index(double x)
{
    double a = fabs(x);
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);
    int32_t k = (int32_t)(bits >> SHIFT);
    return x < 0 ? -1 - k : k;
}

static double from_bits(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

double xb_hist_low(int32_t index)
{
    if (index < 0)
        return -xb_hist_high(-1 - index);
    return from_bits((uint64_t)index << SHIFT);
}

double xb_hist_high(int32_t index)
{
    if (index < 0)
        return -xb_hist_low(-1 - index);
    /* (XB_HIST_INDEX_MAX + 1) << SHIFT is the pattern of +inf. */
    return from_bits((uint64_t)(index + 1) << SHIFT);
}

double xb_hist_mid(int32_t index)
{
    if (index < 0)
        return -xb_hist_mid(-1 - index);
    double lo = xb_hist_low(index), hi = xb_hist_high(index);
    return lo + (hi - lo) / 2;
}

void xb_hist_init(struct xb_hist *h)
{
    memset(h, 0, sizeof *h);
    xb_fsum_init(&h->xh_sum);
    xb_fsum_init(&h->xh_sum_squares);
}

/* Make xh_counts cover indices lo..hi (lo <= hi), at least doubling it. */
static int cover(struct xb_hist *h, int32_t lo, int32_t hi)
{
    int64_t old_lo = h->xh_lo, old_len = (int64_t)h->xh_len;
    if (h->xh_counts != NULL && lo >= old_lo && hi < old_lo + old_len)
        return 0;
    int64_t need_lo = lo, need_hi = hi;
    if (h->xh_counts != NULL) {
        need_lo = old_lo < lo ? old_lo : lo;
        need_hi = old_lo + old_len - 1 > hi ? old_lo + old_len - 1 : hi;
    }
    int64_t len = need_hi - need_lo + 1;
    if (len < 2 * old_len)
        len = 2 * old_len;
    if (len < 256)
        len = 256;
    if (len > RANGE)
        len = RANGE;
    /* The slack goes on the side that grew, within the index range. */
    int64_t start = h->xh_counts != NULL && lo < old_lo ? need_hi - len + 1
                                                        : need_lo;
    int64_t floor_ = need_hi - len + 1 > XB_HIST_INDEX_MIN
                         ? need_hi - len + 1 : XB_HIST_INDEX_MIN;
    int64_t ceil_ = need_lo < XB_HIST_INDEX_MAX - len + 1
                        ? need_lo : XB_HIST_INDEX_MAX - len + 1;
    if (start < floor_)
        start = floor_;
    if (start > ceil_)
        start = ceil_;
    uint64_t *counts = calloc((size_t)len, sizeof *counts);
    if (counts == NULL)
        return ENOMEM;
    if (h->xh_counts != NULL) {
        memcpy(counts + (old_lo - start), h->xh_counts,
               (size_t)old_len * sizeof *counts);
        free(h->xh_counts);
    }
    h->xh_counts = counts;
    h->xh_lo = (int32_t)start;
    h->xh_len = (size_t)len;
    return 0;
}

int xb_hist_add(struct xb_hist *h, double x)
{
    if (!isfinite(x))
        return EINVAL;
    int32_t i = xb_hist_index(x);
    int rc = cover(h, i, i);
    if (rc != 0)
        return rc;
    h->xh_counts[i - h->xh_lo]++;
    if (h->xh_count == 0 || x < h->xh_min)
        h->xh_min = x;
    if (h->xh_count == 0 || x > h->xh_max)
        h->xh_max = x;
    h->xh_count++;
    xb_fsum_add(&h->xh_sum, x);
    double sq = x * x;
    xb_fsum_add(&h->xh_sum_squares, sq);
    /* x*x rounds; fma gives back exactly what the rounding dropped. */
    xb_fsum_add(&h->xh_sum_squares, fma(x, x, -sq));
    return 0;
}

int xb_hist_merge(struct xb_hist *dst, const struct xb_hist *src)
{
    if (src->xh_count == 0)
        return 0;
    int32_t lo = xb_hist_index(src->xh_min), hi = xb_hist_index(src->xh_max);
    int rc = cover(dst, lo, hi);
    if (rc != 0)
        return rc;
    for (int32_t i = lo; i <= hi; i++)
        dst->xh_counts[i - dst->xh_lo] += src->xh_counts[i - src->xh_lo];
    if (dst->xh_count == 0 || src->xh_min < dst->xh_min)
        dst->xh_min = src->xh_min;
    if (dst->xh_count == 0 || src->xh_max > dst->xh_max)
        dst->xh_max = src->xh_max;
    dst->xh_count += src->xh_count;
    /* The partials add up exactly to src's sums, so adding them one by one
     * keeps dst's sums exact. */
    const struct xb_fsum *from[2] = {&src->xh_sum, &src->xh_sum_squares};
    struct xb_fsum *to[2] = {&dst->xh_sum, &dst->xh_sum_squares};
    for (int k = 0; k < 2; k++) {
        to[k]->fs_overflow |= from[k]->fs_overflow;
        for (int j = 0; j < from[k]->fs_n; j++)
            xb_fsum_add(to[k], from[k]->fs_p[j]);
    }
    return 0;
}

uint64_t xb_hist_bucket(const struct xb_hist *h, int32_t index)
{
    if (h->xh_counts == NULL || index < h->xh_lo ||
        (int64_t)index >= (int64_t)h->xh_lo + (int64_t)h->xh_len)
        return 0;
    return h->xh_counts[index - h->xh_lo];
}

size_t xb_hist_nonempty(const struct xb_hist *h)
{
    size_t n = 0;
    for (size_t i = 0; i < h->xh_len; i++)
        n += h->xh_counts[i] != 0;
    return n;
}

void xb_hist_free(struct xb_hist *h)
{
    free(h->xh_counts);
    xb_hist_init(h);
}
