/* test_11_histogram: the "log2-128" histogram of bench/common/histogram.h
 * and the result writer's switch to it above 100,000 samples.
 *
 * Bucket boundaries at known points and for random doubles of every
 * exponent and both signs; exact count, min, max and sums (against cases
 * a naive sum gets wrong); merging two halves gives exactly the whole;
 * every nearest-rank quantile read from the buckets is within 2^-8 of the
 * true one; and xb_result_emit prints raw samples up to 100,000, a
 * histogram whose buckets add up to the count from 100,001 on, and
 * nothing at all when the histogram's sum overflows. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "histogram.h"
#include "result.h"
#include "support/testhelp.h"
#include "workload.h"

#define BOUND (1.0 / 256) /* 2^-8 */

static double uniform(struct xb_rng *r)
{
    return (double)(xb_rng_next(r) >> 11) / 9007199254740992.0;
}

/* A positive value with a log-uniform spread over 2^-40 .. 2^40. */
static double spread(struct xb_rng *r)
{
    return ldexp(1.0 + uniform(r), (int)xb_rng_below(r, 81) - 40);
}

/* Latency-like: mostly near 5, a long tail to 5e4. */
static double latency(struct xb_rng *r)
{
    double u = uniform(r);
    return u < 0.99 ? 5.0 + u : 5.0 * pow(10.0, 1.0 + 3.0 * uniform(r));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int in_bucket(double x)
{
    int32_t i = xb_hist_index(x);
    double lo = xb_hist_low(i), hi = xb_hist_high(i);
    return i >= 0 ? lo <= x && x < hi : lo < x && x <= hi;
}

static void boundaries(void)
{
    test_cond("index(1.0) is 1023 * 128", xb_hist_index(1.0) == 130944);
    test_cond("index(2.0) is 1024 * 128", xb_hist_index(2.0) == 131072);
    test_cond("the largest double below 1.0 is in the bucket below",
              xb_hist_index(nextafter(1.0, 0.0)) == 130943);
    test_cond("1 + 1/128 starts the next bucket",
              xb_hist_index(1.0 + 1.0 / 128) == 130945 &&
                  xb_hist_index(nextafter(1.0 + 1.0 / 128, 0.0)) == 130944);
    test_cond("bucket 130945 is [1 + 1/128, 1 + 2/128)",
              xb_hist_low(130945) == 1.0 + 1.0 / 128 &&
                  xb_hist_high(130945) == 1.0 + 2.0 / 128);
    test_cond("0.0 and -0.0 are in bucket 0",
              xb_hist_index(0.0) == 0 && xb_hist_index(-0.0) == 0);
    test_cond("-1.0 is in bucket -1 - index(1.0)",
              xb_hist_index(-1.0) == -130945);
    test_cond("negative buckets mirror positive ones",
              xb_hist_low(-130945) == -xb_hist_high(130944) &&
                  xb_hist_high(-130945) == -1.0 &&
                  xb_hist_mid(-130945) == -xb_hist_mid(130944));
    test_cond("DBL_MAX is in the top bucket, -DBL_MAX in the bottom one",
              xb_hist_index(DBL_MAX) == XB_HIST_INDEX_MAX &&
                  xb_hist_index(-DBL_MAX) == XB_HIST_INDEX_MIN);
    test_cond("the top bucket ends at +inf",
              isinf(xb_hist_high(XB_HIST_INDEX_MAX)) &&
                  xb_hist_high(XB_HIST_INDEX_MAX) > 0);
    test_cond("subnormals fall in buckets 0..127",
              xb_hist_index(DBL_MIN) == 128 &&
                  xb_hist_index(nextafter(DBL_MIN, 0.0)) == 127);

    struct xb_rng rng;
    xb_rng_seed(&rng, 1);
    int inside = 1, monotone = 1, narrow = 1, mid_ok = 1;
    double prev = -INFINITY;
    static double v[200000];
    for (int k = 0; k < 200000; k++) {
        /* any finite double: random sign, exponent and fraction */
        uint64_t bits = xb_rng_next(&rng);
        double x;
        memcpy(&x, &bits, sizeof x);
        if (!isfinite(x))
            x = (double)k;
        v[k] = x;
        inside &= in_bucket(x);
        if (fabs(x) >= DBL_MIN && fabs(x) <= DBL_MAX / 2) {
            int32_t i = xb_hist_index(x);
            double lo = fabs(xb_hist_low(i)), hi = fabs(xb_hist_high(i));
            double wide = fabs(hi - lo) / fmin(lo, hi);
            narrow &= wide <= 1.0 / 128;
            mid_ok &= fabs(xb_hist_mid(i) - x) <= BOUND * fabs(x);
        }
    }
    qsort(v, 200000, sizeof v[0], cmp_double);
    for (int k = 0; k < 200000; k++) {
        monotone &= xb_hist_index(v[k]) >= (k ? xb_hist_index(prev) : INT32_MIN);
        prev = v[k];
    }
    test_cond("every random double lies inside its bucket's bounds", inside);
    test_cond("index() never decreases as x grows", monotone);
    test_cond("a normal bucket is at most 1/128 of its bound wide", narrow);
    test_cond("a bucket's midpoint is within 2^-8 of each value in it",
              mid_ok);
}

static void sums(void)
{
    struct xb_fsum s;
    xb_fsum_init(&s);
    test_cond("the sum of nothing is 0", xb_fsum_value(&s) == 0.0);
    xb_fsum_add(&s, 1e100);
    xb_fsum_add(&s, 1.0);
    xb_fsum_add(&s, -1e100);
    test_cond("1e100 + 1 - 1e100 is exactly 1", xb_fsum_value(&s) == 1.0);
    xb_fsum_init(&s);
    for (int k = 0; k < 10; k++)
        xb_fsum_add(&s, 0.1);
    test_cond("ten times 0.1 is exactly rounded to 1.0",
              xb_fsum_value(&s) == 1.0);
    xb_fsum_init(&s);
    xb_fsum_add(&s, DBL_MAX);
    xb_fsum_add(&s, DBL_MAX);
    test_cond("an overflowing sum is NaN", isnan(xb_fsum_value(&s)));

    /* (2^27 + 1)^2 = 2^54 + 2^28 + 1 rounds the 1 away; three more 1s make
     * 2^54 + 2^28 + 4, a double, which only an exact sum finds. */
    struct xb_hist h;
    xb_hist_init(&h);
    xb_hist_add(&h, 134217729.0);
    for (int k = 0; k < 3; k++)
        xb_hist_add(&h, 1.0);
    test_cond("sum_squares keeps what x*x rounds away",
              xb_fsum_value(&h.xh_sum_squares) == 18014398777917444.0);
    test_cond("non-finite values are refused",
              xb_hist_add(&h, NAN) == EINVAL &&
                  xb_hist_add(&h, INFINITY) == EINVAL && h.xh_count == 4);
    xb_hist_free(&h);
}

static double sum_exact(const double *v, size_t n)
{
    struct xb_fsum s;
    xb_fsum_init(&s);
    for (size_t i = 0; i < n; i++)
        xb_fsum_add(&s, v[i]);
    return xb_fsum_value(&s);
}

/* The nearest-rank value of rank r (1-based) read from the buckets, as the
 * server reads it: min and max for ranks 1 and n, else the midpoint of the
 * bucket holding it, clamped to [min, max]. */
static double rank_value(const struct xb_hist *h, uint64_t r)
{
    uint64_t seen = 0;
    if (r == 1)
        return h->xh_min;
    if (r == h->xh_count)
        return h->xh_max;
    for (size_t i = 0; i < h->xh_len; i++) {
        seen += h->xh_counts[i];
        if (seen >= r) {
            double m = xb_hist_mid(h->xh_lo + (int32_t)i);
            return fmin(fmax(m, h->xh_min), h->xh_max);
        }
    }
    return NAN;
}

#define N 300000

static void counts_merge_quantiles(void)
{
    static double v[N];
    struct xb_rng rng;
    xb_rng_seed(&rng, 2);
    struct xb_hist whole, a, b;
    xb_hist_init(&whole);
    xb_hist_init(&a);
    xb_hist_init(&b);
    double mn = INFINITY, mx = -INFINITY;
    int added = 1;
    for (int k = 0; k < N; k++) {
        v[k] = k % 3 == 0 ? spread(&rng) : latency(&rng);
        if (k % 1000 == 7)
            v[k] = -v[k];
        mn = fmin(mn, v[k]);
        mx = fmax(mx, v[k]);
        added &= xb_hist_add(&whole, v[k]) == 0;
        added &= xb_hist_add(k < N / 3 ? &a : &b, v[k]) == 0;
    }
    test_cond("300,000 values added", added);
    uint64_t total = 0;
    for (size_t i = 0; i < whole.xh_len; i++)
        total += whole.xh_counts[i];
    test_cond("count is exact and the buckets add up to it",
              whole.xh_count == N && total == N);
    test_cond("min and max are exact",
              whole.xh_min == mn && whole.xh_max == mx);
    test_cond("sum is exactly rounded",
              xb_fsum_value(&whole.xh_sum) == sum_exact(v, N));

    struct xb_hist empty;
    xb_hist_init(&empty);
    test_cond("merging an empty histogram changes nothing",
              xb_hist_merge(&a, &empty) == 0 && a.xh_count == N / 3);
    test_cond("merging into an empty histogram copies it",
              xb_hist_merge(&empty, &b) == 0 && empty.xh_count == b.xh_count &&
                  empty.xh_min == b.xh_min && empty.xh_max == b.xh_max &&
                  xb_hist_nonempty(&empty) == xb_hist_nonempty(&b));
    xb_hist_free(&empty);
    test_cond("merging the two parts succeeds", xb_hist_merge(&a, &b) == 0);
    int same = a.xh_count == whole.xh_count && a.xh_min == whole.xh_min &&
               a.xh_max == whole.xh_max;
    for (int32_t i = XB_HIST_INDEX_MIN; i <= XB_HIST_INDEX_MAX; i++)
        same &= xb_hist_bucket(&a, i) == xb_hist_bucket(&whole, i);
    test_cond("the merge of two parts has the whole's buckets, count, min "
              "and max", same);
    test_cond("and exactly the whole's sums",
              xb_fsum_value(&a.xh_sum) == xb_fsum_value(&whole.xh_sum) &&
                  xb_fsum_value(&a.xh_sum_squares) ==
                      xb_fsum_value(&whole.xh_sum_squares));

    qsort(v, N, sizeof v[0], cmp_double);
    static const double percents[] = {0.001, 1, 10, 25, 50, 75, 90, 99,
                                      99.9, 99.99, 100};
    int within = 1;
    for (size_t p = 0; p < sizeof percents / sizeof percents[0]; p++) {
        uint64_t r = (uint64_t)ceil(percents[p] * N / 100);
        double truth = v[r - 1], est = rank_value(&whole, r);
        if (fabs(est - truth) > BOUND * fabs(truth)) {
            printf("# p%g: %.17g read as %.17g\n", percents[p], truth, est);
            within = 0;
        }
    }
    test_cond("every quantile is within 2^-8 of the true one", within);
    int all_ranks = 1;
    for (uint64_t r = 1; r <= N; r += 997)
        all_ranks &= fabs(rank_value(&whole, r) - v[r - 1]) <=
                     BOUND * fabs(v[r - 1]);
    test_cond("so is every 997th rank", all_ranks);
    test_cond("rank 1 is min and rank n is max exactly",
              rank_value(&whole, 1) == v[0] && rank_value(&whole, N) == v[N - 1]);

    struct xb_hist up, down;
    xb_hist_init(&up);
    xb_hist_init(&down);
    xb_hist_add(&up, 1e-300);
    xb_hist_add(&up, 1e300);
    xb_hist_add(&down, 1e300);
    xb_hist_add(&down, -1e300);
    test_cond("the dense range grows up and down to far-apart values",
              xb_hist_bucket(&up, xb_hist_index(1e-300)) == 1 &&
                  xb_hist_bucket(&up, xb_hist_index(1e300)) == 1 &&
                  xb_hist_bucket(&down, xb_hist_index(-1e300)) == 1 &&
                  xb_hist_nonempty(&down) == 2);
    test_cond("merging far-apart histograms keeps every bucket",
              xb_hist_merge(&up, &down) == 0 && xb_hist_nonempty(&up) == 3 &&
                  xb_hist_bucket(&up, xb_hist_index(1e300)) == 2 &&
                  up.xh_min == -1e300);
    xb_hist_free(&up);
    xb_hist_free(&down);
    xb_hist_free(&whole);
    xb_hist_free(&a);
    xb_hist_free(&b);
}

/* What xb_result_emit prints for n samples 1, 2, ..., n (one line). */
static char *emitted(size_t n)
{
    xb_result *r = xb_result_new("storage", "timer", "os", "timer_delta",
                                 "ns", XB_LOWER);
    for (size_t i = 1; i <= n; i++)
        xb_sample(r, (double)i);
    int count_ok = xb_sample_count(r) == n;
    FILE *tmp = tmpfile();
    if (tmp == NULL)
        abort();
    fflush(stdout);
    int saved = dup(1);
    if (saved < 0 || dup2(fileno(tmp), 1) < 0)
        abort();
    xb_result_emit(r);
    if (dup2(saved, 1) < 0)
        abort();
    close(saved);
    fseek(tmp, 0, SEEK_END);
    long size = ftell(tmp);
    rewind(tmp);
    char *line = calloc((size_t)size + 1, 1);
    if (line == NULL || fread(line, 1, (size_t)size, tmp) != (size_t)size)
        abort();
    fclose(tmp);
    test_cond("xb_sample_count counts every sample", count_ok);
    return line;
}

/* The sum of the counts of "buckets":[[i,c],...], or -1 if malformed or
 * the indices do not increase. */
static long long bucket_total(const char *line)
{
    const char *p = strstr(line, "\"buckets\":[");
    if (p == NULL)
        return -1;
    p += strlen("\"buckets\":[");
    long long total = 0, prev = XB_HIST_INDEX_MIN - 1LL;
    for (;;) {
        long long i, c;
        int used;
        if (sscanf(p, "[%lld,%lld]%n", &i, &c, &used) != 2 || i <= prev || c < 1)
            return -1;
        total += c;
        prev = i;
        p += used;
        if (*p == ']')
            return total;
        if (*p++ != ',')
            return -1;
    }
}

/* In a child: 100,001 samples of 1e300, whose squares overflow a double.
 * Returns 1 if the child aborted and printed nothing on stdout. */
static int overflow_prints_nothing(void)
{
    int out[2];
    if (pipe(out) != 0)
        abort();
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        abort();
    if (pid == 0) {
        dup2(out[1], 1);
        close(out[0]);
        if (freopen("/dev/null", "w", stderr) == NULL)
            _exit(3);
        xb_result *r = xb_result_new("storage", "timer", "os", "timer_delta",
                                     "ns", XB_LOWER);
        for (int i = 0; i <= XB_HIST_RAW_MAX; i++)
            xb_sample(r, 1e300);
        xb_result_emit(r);
        _exit(0);
    }
    close(out[1]);
    char buf[64];
    ssize_t n = read(out[0], buf, sizeof buf);
    close(out[0]);
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return 0;
    return n == 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void writer(void)
{
    char *raw = emitted(XB_HIST_RAW_MAX);
    test_cond("100,000 samples are printed raw",
              strstr(raw, "\"samples\":[1,2,3,") != NULL &&
                  strstr(raw, ",100000],\"library\"") != NULL &&
                  strstr(raw, "histogram") == NULL);
    free(raw);
    char *h = emitted(XB_HIST_RAW_MAX + 1);
    test_cond("100,001 samples are printed as a histogram",
              strstr(h, "\"samples\"") == NULL &&
                  strstr(h, ",\"histogram\":{\"scheme\":\"log2-128\","
                            "\"count\":100001,\"min\":1,\"max\":100001,"
                            "\"sum\":5000150001,\"sum_squares\":"
                            "333348333550001,\"buckets\":[[130944,1],") !=
                      NULL &&
                  strstr(h, "]]},\"library\":{") != NULL);
    test_cond("its buckets increase and add up to the count",
              bucket_total(h) == XB_HIST_RAW_MAX + 1);
    free(h);
    test_cond("a sum of squares that overflows aborts before the line is started",
              overflow_prints_nothing());
}

int main(void)
{
    boundaries();
    sums();
    counts_merge_quantiles();
    writer();
    return test_report();
}
