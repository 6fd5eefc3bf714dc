/* fit.c: see fit.h. */
#include "fit.h"

#include <math.h>
#include <string.h>

#define MAXK (XB_FIT_MAXVARS + 1)

/* A relative pivot below this means the column adds nothing new. */
#define SINGULAR_TOL 1e-12

/* Cholesky factorization of the m x m matrix a (in place, lower triangle):
 * 0, or XB_FIT_ESINGULAR if a pivot is not clearly positive. */
static int cholesky(double a[MAXK][MAXK], int m)
{
    double diag[MAXK];
    for (int j = 0; j < m; j++)
        diag[j] = a[j][j];
    for (int j = 0; j < m; j++) {
        double d = a[j][j];
        for (int p = 0; p < j; p++)
            d -= a[j][p] * a[j][p];
        if (!(diag[j] > 0) || !(d > SINGULAR_TOL * diag[j]))
            return XB_FIT_ESINGULAR;
        a[j][j] = sqrt(d);
        for (int i = j + 1; i < m; i++) {
            double s = a[i][j];
            for (int p = 0; p < j; p++)
                s -= a[i][p] * a[j][p];
            a[i][j] = s / a[j][j];
        }
    }
    return 0;
}

/* Solve L L' z = b for z (L from cholesky()). */
static void chol_solve(double l[MAXK][MAXK], int m, const double *b,
                       double *z)
{
    double t[MAXK];
    for (int i = 0; i < m; i++) {
        double s = b[i];
        for (int p = 0; p < i; p++)
            s -= l[i][p] * t[p];
        t[i] = s / l[i][i];
    }
    for (int i = m - 1; i >= 0; i--) {
        double s = t[i];
        for (int p = i + 1; p < m; p++)
            s -= l[p][i] * z[p];
        z[i] = s / l[i][i];
    }
}

int xb_fit_ols(const double *x, size_t nvars, const double *y, size_t n,
               int intercept, struct xb_fit *out)
{
    if (x == NULL || y == NULL || out == NULL || nvars == 0 ||
        nvars > XB_FIT_MAXVARS)
        return XB_FIT_EINVAL;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(y[i]))
            return XB_FIT_EINVAL;
        for (size_t j = 0; j < nvars; j++)
            if (!isfinite(x[i * nvars + j]))
                return XB_FIT_EINVAL;
    }
    int m = (int)nvars;
    int k = m + (intercept ? 1 : 0);
    if (n < (size_t)k)
        return XB_FIT_ETOOFEW;

    /* means (zero without an intercept: no centring) */
    double xm[MAXK] = {0}, ym = 0;
    if (intercept) {
        for (size_t i = 0; i < n; i++) {
            ym += y[i];
            for (int j = 0; j < m; j++)
                xm[j] += x[i * nvars + (size_t)j];
        }
        ym /= (double)n;
        for (int j = 0; j < m; j++)
            xm[j] /= (double)n;
    }

    /* normal equations of the (centred) problem */
    double a[MAXK][MAXK], b[MAXK] = {0}, slope[MAXK];
    memset(a, 0, sizeof a);
    for (size_t i = 0; i < n; i++) {
        double d[MAXK], dy = y[i] - ym;
        for (int j = 0; j < m; j++)
            d[j] = x[i * nvars + (size_t)j] - xm[j];
        for (int j = 0; j < m; j++) {
            b[j] += d[j] * dy;
            for (int p = 0; p <= j; p++)
                a[j][p] += d[j] * d[p];
        }
    }
    for (int j = 0; j < m; j++)
        for (int p = j + 1; p < m; p++)
            a[j][p] = a[p][j];
    if (cholesky(a, m) != 0)
        return XB_FIT_ESINGULAR;
    chol_solve(a, m, b, slope);

    memset(out, 0, sizeof *out);
    out->n = n;
    out->k = k;
    out->intercept = intercept ? 1 : 0;
    double c = ym;
    for (int j = 0; j < m; j++)
        c -= slope[j] * xm[j];
    int off = intercept ? 1 : 0;
    if (intercept)
        out->coef[0] = c;
    for (int j = 0; j < m; j++)
        out->coef[off + j] = slope[j];

    /* residuals from the data */
    double rss = 0, tss = 0;
    for (size_t i = 0; i < n; i++) {
        double f = intercept ? c : 0;
        for (int j = 0; j < m; j++)
            f += slope[j] * x[i * nvars + (size_t)j];
        double r = y[i] - f, t = intercept ? y[i] - ym : y[i];
        rss += r * r;
        tss += t * t;
    }
    out->rss = rss;
    out->r2 = tss > 0 ? 1.0 - rss / tss : 1.0;
    size_t dof = n - (size_t)k;
    out->sigma = dof > 0 ? sqrt(rss / (double)dof) : NAN;

    /* standard errors: the diagonal of (X'X)^-1 from the factor, and for
     * the intercept 1/n + xm' (Xc'Xc)^-1 xm */
    double inv[MAXK][MAXK];
    for (int j = 0; j < m; j++) {
        double e[MAXK] = {0};
        e[j] = 1;
        chol_solve(a, m, e, inv[j]);
    }
    for (int j = 0; j < m; j++)
        out->se[off + j] = out->sigma * sqrt(inv[j][j]);
    if (intercept) {
        double q = 1.0 / (double)n;
        for (int j = 0; j < m; j++)
            for (int p = 0; p < m; p++)
                q += xm[j] * inv[j][p] * xm[p];
        out->se[0] = out->sigma * sqrt(q);
    }
    return 0;
}

int xb_fit_line(const double *x, const double *y, size_t n,
                struct xb_fit *out)
{
    return xb_fit_ols(x, 1, y, n, 1, out);
}

const char *xb_fit_strerror(int rc)
{
    switch (rc) {
    case 0:
        return "success";
    case XB_FIT_EINVAL:
        return "invalid argument (NULL, bad variable count, or a non-finite "
               "value)";
    case XB_FIT_ETOOFEW:
        return "fewer points than unknowns";
    case XB_FIT_ESINGULAR:
        return "no unique fit (a variable does not vary, or depends on the "
               "others)";
    default:
        return "unknown fit error";
    }
}
