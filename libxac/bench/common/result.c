/* result.c: the one C writer of the xaclab result format (see result.h). */
#include "result.h"

#include "histogram.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef XAC_VERSION_STRING
#define XAC_VERSION_STRING "unknown"
#endif
#ifndef XAC_GIT_REVISION
#define XAC_GIT_REVISION "unknown"
#endif

#define XB_MAX_PARAMS 32

struct xb_param {
    char *key;
    char *json; /* the value, already rendered as JSON */
};

struct xb_result {
    char *suite, *benchmark, *sut, *metric, *unit;
    enum xb_better better;
    struct xb_param params[XB_MAX_PARAMS];
    int nparams;
    double *samples;
    size_t nsamples, cap;
    /* Once there are more than XB_HIST_RAW_MAX samples, they all go here
     * and samples is freed. */
    struct xb_hist *hist;
};

static void die(const char *what)
{
    fprintf(stderr, "result: %s\n", what);
    abort();
}

static char *dup_or_die(const char *s)
{
    char *d = strdup(s);
    if (d == NULL)
        die("out of memory");
    return d;
}

xb_result *xb_result_new(const char *suite, const char *benchmark,
                         const char *sut, const char *metric,
                         const char *unit, enum xb_better better)
{
    xb_result *r = calloc(1, sizeof *r);
    if (r == NULL)
        die("out of memory");
    r->suite = dup_or_die(suite);
    r->benchmark = dup_or_die(benchmark);
    r->sut = dup_or_die(sut);
    r->metric = dup_or_die(metric);
    r->unit = dup_or_die(unit);
    r->better = better;
    return r;
}

/* JSON-quote s into a fresh string. */
static char *quote(const char *s)
{
    size_t n = strlen(s);
    char *out = malloc(n * 6 + 3), *p = out;
    if (out == NULL)
        die("out of memory");
    *p++ = '"';
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            *p++ = '\\';
            *p++ = (char)c;
        } else if (c < 0x20) {
            p += sprintf(p, "\\u%04x", c);
        } else {
            *p++ = (char)c;
        }
    }
    *p++ = '"';
    *p = '\0';
    return out;
}

static void add_param(xb_result *r, const char *key, char *json)
{
    for (int i = 0; i < r->nparams; i++) {
        if (strcmp(r->params[i].key, key) == 0) {
            free(r->params[i].json);
            r->params[i].json = json;
            return;
        }
    }
    if (r->nparams == XB_MAX_PARAMS)
        die("more than 32 params");
    r->params[r->nparams].key = dup_or_die(key);
    r->params[r->nparams].json = json;
    r->nparams++;
}

void xb_param_int(xb_result *r, const char *key, long long value)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", value);
    add_param(r, key, dup_or_die(buf));
}

static void format_number(char *buf, size_t len, double value)
{
    if (!isfinite(value))
        die("a non-finite number cannot be written as JSON");
    snprintf(buf, len, "%.9g", value);
}

void xb_param_num(xb_result *r, const char *key, double value)
{
    char buf[40];
    format_number(buf, sizeof buf, value);
    add_param(r, key, dup_or_die(buf));
}

void xb_param_str(xb_result *r, const char *key, const char *value)
{
    add_param(r, key, quote(value));
}

void xb_param_bool(xb_result *r, const char *key, int value)
{
    add_param(r, key, dup_or_die(value ? "true" : "false"));
}

static void hist_add(xb_result *r, double value)
{
    if (xb_hist_add(r->hist, value) != 0)
        die("out of memory");
}

/* The 100,001st sample: from now on the result carries a histogram. */
static void switch_to_histogram(xb_result *r)
{
    r->hist = malloc(sizeof *r->hist);
    if (r->hist == NULL)
        die("out of memory");
    xb_hist_init(r->hist);
    for (size_t i = 0; i < r->nsamples; i++)
        hist_add(r, r->samples[i]);
    free(r->samples);
    r->samples = NULL;
    r->nsamples = r->cap = 0;
}

void xb_sample(xb_result *r, double value)
{
    if (!isfinite(value))
        die("non-finite sample");
    if (r->hist == NULL && r->nsamples == XB_HIST_RAW_MAX)
        switch_to_histogram(r);
    if (r->hist != NULL) {
        hist_add(r, value);
        return;
    }
    if (r->nsamples == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        double *s = realloc(r->samples, cap * sizeof *s);
        if (s == NULL)
            die("out of memory");
        r->samples = s;
        r->cap = cap;
    }
    r->samples[r->nsamples++] = value;
}

size_t xb_sample_count(const xb_result *r)
{
    return r->hist != NULL ? (size_t)r->hist->xh_count : r->nsamples;
}

static void print_field(FILE *f, const char *key, const char *value)
{
    char *q = quote(value);
    fprintf(f, ",\"%s\":%s", key, q);
    free(q);
}

/* Before anything is printed: what the format cannot carry. */
static void check_histogram(const struct xb_hist *h)
{
    if (h->xh_count > XB_HIST_MAX_COUNT)
        die("more than 2^53 - 1 samples");
    if (xb_hist_nonempty(h) > XB_HIST_MAX_BUCKETS)
        die("the samples fill more than 65,536 histogram buckets");
    if (!isfinite(xb_fsum_value(&h->xh_sum)) ||
        !isfinite(xb_fsum_value(&h->xh_sum_squares)))
        die("the sum of the samples, or of their squares, overflows");
}

/* A double that reads back exactly (min, max and the sums must be exact). */
static void print_exact(FILE *f, const char *key, double value)
{
    fprintf(f, ",\"%s\":%.17g", key, value);
}

static void print_histogram(FILE *f, const struct xb_hist *h)
{
    fputs(",\"histogram\":{\"scheme\":\"" XB_HIST_SCHEME "\"", f);
    fprintf(f, ",\"count\":%llu", (unsigned long long)h->xh_count);
    print_exact(f, "min", h->xh_min);
    print_exact(f, "max", h->xh_max);
    print_exact(f, "sum", xb_fsum_value(&h->xh_sum));
    print_exact(f, "sum_squares", xb_fsum_value(&h->xh_sum_squares));
    fputs(",\"buckets\":[", f);
    int first = 1;
    for (size_t i = 0; i < h->xh_len; i++) {
        if (h->xh_counts[i] == 0)
            continue;
        fprintf(f, "%s[%ld,%llu]", first ? "" : ",",
                (long)h->xh_lo + (long)i, (unsigned long long)h->xh_counts[i]);
        first = 0;
    }
    fputs("]}", f);
}

static void print_samples(FILE *f, const xb_result *r)
{
    char num[40];
    fputs(",\"samples\":[", f);
    for (size_t i = 0; i < r->nsamples; i++) {
        format_number(num, sizeof num, r->samples[i]);
        fprintf(f, "%s%s", i ? "," : "", num);
    }
    fputc(']', f);
}

void xb_result_emit(xb_result *r)
{
    FILE *f = stdout;

    if (r->nsamples == 0 && r->hist == NULL)
        die("a result needs at least one sample");
    if (r->hist != NULL)
        check_histogram(r->hist);
    fputs("{\"format\":\"xaclab-result\",\"format_version\":1", f);
    print_field(f, "suite", r->suite);
    print_field(f, "benchmark", r->benchmark);
    print_field(f, "sut", r->sut);
    fputs(",\"params\":{", f);
    for (int i = 0; i < r->nparams; i++) {
        char *k = quote(r->params[i].key);
        fprintf(f, "%s%s:%s", i ? "," : "", k, r->params[i].json);
        free(k);
    }
    fputc('}', f);
    print_field(f, "metric", r->metric);
    print_field(f, "unit", r->unit);
    print_field(f, "better", r->better == XB_LOWER ? "lower" : "higher");
    if (r->hist != NULL)
        print_histogram(f, r->hist);
    else
        print_samples(f, r);
    fputs(",\"library\":{\"name\":\"libxac\",\"version\":\"" XAC_VERSION_STRING
          "\",\"git_revision\":\"" XAC_GIT_REVISION "\"}}\n", f);
    if (fflush(f) != 0)
        die("cannot write to stdout");
    xb_result_free(r);
}

void xb_result_free(xb_result *r)
{
    if (r == NULL)
        return;
    for (int i = 0; i < r->nparams; i++) {
        free(r->params[i].key);
        free(r->params[i].json);
    }
    free(r->suite);
    free(r->benchmark);
    free(r->sut);
    free(r->metric);
    free(r->unit);
    free(r->samples);
    if (r->hist != NULL)
        xb_hist_free(r->hist);
    free(r->hist);
    free(r);
}
