/* fit.h: ordinary least squares for the thesis's cost models.
 *
 * Thesis section 4.2-4.3 (table 4.6) models the time of a transaction that
 * reads R pages and writes W pages as T = c + a*R + b*W.  xb_fit_ols()
 * fits such a model, y = coef[0] + coef[1]*x1 + ... + coef[k]*xk, to n
 * measured points and reports what a reader needs to trust it:
 *
 *   double x[] = {R0, W0,  R1, W1,  ...};   // n rows of nvars, row-major
 *   double y[] = {T0, T1, ...};
 *   struct xb_fit f;
 *   if (xb_fit_ols(x, 2, y, n, 1, &f) == 0)
 *       // c = f.coef[0], a = f.coef[1], b = f.coef[2], f.se[...], f.r2
 *
 * xb_fit_line() is the one-variable case T(n) = c + a*n.
 *
 * Method: with an intercept the columns are centred first (so that large
 * page counts and a small constant do not ruin the conditioning), the
 * normal equations of the centred problem are solved by Cholesky
 * factorization, and the intercept follows from the means.  Residuals are
 * computed from the data, not from a formula.
 *
 * Statistics (dof = n - k, k = nvars + intercept unknowns):
 *   rss    sum of squared residuals
 *   sigma  residual standard error sqrt(rss / dof)
 *   se[j]  standard error of coef[j], sigma * sqrt((X'X)^-1 [j][j]);
 *          NaN when dof == 0 (exactly as many points as unknowns: the fit
 *          passes through every point and says nothing about the noise)
 *   r2     1 - rss / tss, tss = sum (y - mean y)^2 with an intercept and
 *          sum y^2 without (the uncentred R^2, as R and statsmodels do);
 *          1.0 when tss == 0 (y is constant and the model reproduces it)
 *
 * Check se[] with isfinite() before recording it: result.h aborts on
 * non-finite samples.
 */
#ifndef XB_FIT_H
#define XB_FIT_H

#include <stddef.h>

#define XB_FIT_MAXVARS 8

/** Error returns (0 is success). */
enum {
    XB_FIT_EINVAL = -1,   /* NULL pointer, nvars 0 or > XB_FIT_MAXVARS,
                           * or a NaN/infinite value in x or y */
    XB_FIT_ETOOFEW = -2,  /* fewer points than unknowns (n < k) */
    XB_FIT_ESINGULAR = -3 /* no unique solution: a variable does not vary
                           * (zero variance), or is a linear combination of
                           * others (e.g. R == W on every point) */
};

struct xb_fit {
    size_t n;      /* points used */
    int k;         /* unknowns: nvars, plus 1 with an intercept */
    int intercept; /* 1 if coef[0] is the intercept */
    /* With an intercept: coef[0] = intercept, coef[1 + j] = slope of
     * variable j.  Without: coef[j] = slope of variable j. */
    double coef[XB_FIT_MAXVARS + 1];
    double se[XB_FIT_MAXVARS + 1];
    double rss, sigma, r2;
};

/** Fit y[i] ~ (intercept) + sum_j coef * x[i*nvars + j], i < n.
 *
 * @param x n rows of nvars values, row-major.
 * @param nvars number of variables, 1..XB_FIT_MAXVARS.
 * @param y n observations.
 * @param intercept 1 to fit a constant term, 0 to force it to zero.
 * @param out filled on success; left unspecified on error.
 * @return 0; XB_FIT_EINVAL; XB_FIT_ETOOFEW; XB_FIT_ESINGULAR.
 */
int xb_fit_ols(const double *x, size_t nvars, const double *y, size_t n,
               int intercept, struct xb_fit *out);

/** y ~ coef[0] + coef[1]*x: xb_fit_ols(x, 1, y, n, 1, out). */
int xb_fit_line(const double *x, const double *y, size_t n,
                struct xb_fit *out);

/** A sentence for an error return ("fewer points than unknowns" ...). */
const char *xb_fit_strerror(int rc);

#endif
