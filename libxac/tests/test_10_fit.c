/* test_10_fit: ordinary least squares of bench/common/fit.h, the fit of the
 * thesis's per-page cost model T = c + a*R + b*W (table 4.6).
 *
 * Exact data must give back a, b and c within 1e-9; noisy data (fixed
 * seed) within a few standard errors, and standard errors that match the
 * noise; Anscombe's quartet, data set I, the published values; degenerate
 * input the documented error codes. */
#include <math.h>
#include <stdint.h>

#include "fit.h"
#include "support/testhelp.h"
#include "workload.h"

static int near(double got, double want, double tol)
{
    return fabs(got - want) <= tol;
}

/* A standard normal deviate (Box-Muller) from the workload generator. */
static double gauss(struct xb_rng *r)
{
    double u1 = ((double)(xb_rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
    double u2 = (double)(xb_rng_next(r) >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

#define NP 121

int main(void)
{
    static double x[2 * NP * 4], y[NP * 4];
    struct xb_fit f;
    const double a = 15.25, b = 31.5, c = 12.75; /* us: per read, per write */
    size_t n = 0;

    /* exact data on a grid of R, W in 0..1024 pages (W shifted by i so
     * that R and W are not collinear on the diagonal) */
    for (int i = 0; i < 11; i++)
        for (int j = 0; j < 11; j++, n++) {
            x[2 * n] = (double)(1 << i) - 1;
            x[2 * n + 1] = (double)(1 << j) - 1 + (double)i;
            y[n] = c + a * x[2 * n] + b * x[2 * n + 1];
        }
    int rc = xb_fit_ols(x, 2, y, n, 1, &f);
    test_cond("exact R,W data fits", rc == 0);
    test_cond("exact: c recovered within 1e-9", near(f.coef[0], c, 1e-9));
    test_cond("exact: a recovered within 1e-9", near(f.coef[1], a, 1e-9));
    test_cond("exact: b recovered within 1e-9", near(f.coef[2], b, 1e-9));
    test_cond("exact: r2 is 1", near(f.r2, 1.0, 1e-12));
    test_cond("exact: n and k", f.n == n && f.k == 3 && f.intercept == 1);
    test_cond("exact: standard errors about 0", f.se[1] < 1e-9 &&
                                                    f.se[2] < 1e-9);

    /* a line through page counts 1..1024 */
    double lx[11], ly[11];
    for (int i = 0; i < 11; i++) {
        lx[i] = (double)(1 << i);
        ly[i] = 4.0 + 2.5 * lx[i];
    }
    rc = xb_fit_line(lx, ly, 11, &f);
    test_cond("exact line fits", rc == 0 && near(f.coef[0], 4.0, 1e-9) &&
                                     near(f.coef[1], 2.5, 1e-9));

    /* noisy data, fixed seed: sigma = 5 us on the same model */
    struct xb_rng rng;
    xb_rng_seed(&rng, 20050520u);
    n = 0;
    for (int rep = 0; rep < 4; rep++)
        for (int i = 0; i < NP; i++, n++) {
            x[2 * n] = (double)xb_rng_below(&rng, 1025);
            x[2 * n + 1] = (double)xb_rng_below(&rng, 1025);
            y[n] = c + a * x[2 * n] + b * x[2 * n + 1] + 5.0 * gauss(&rng);
        }
    rc = xb_fit_ols(x, 2, y, n, 1, &f);
    test_cond("noisy data fits", rc == 0);
    test_cond("noisy: a within 4 standard errors",
              fabs(f.coef[1] - a) < 4 * f.se[1] && f.se[1] < 0.01);
    test_cond("noisy: b within 4 standard errors",
              fabs(f.coef[2] - b) < 4 * f.se[2] && f.se[2] < 0.01);
    test_cond("noisy: c within 4 standard errors",
              fabs(f.coef[0] - c) < 4 * f.se[0] && f.se[0] < 2);
    test_cond("noisy: sigma estimates the noise", near(f.sigma, 5.0, 0.6));
    test_cond("noisy: r2 close to 1", f.r2 > 0.999 && f.r2 < 1.0);

    /* Anscombe (1973), data set I: y = 3.0001 + 0.5001 x, r2 0.6665,
     * se(slope) 0.1179, se(intercept) 1.1247 */
    static const double ax[] = {10, 8, 13, 9, 11, 14, 6, 4, 12, 7, 5};
    static const double ay[] = {8.04, 6.95, 7.58, 8.81, 8.33, 9.96,
                                7.24, 4.26, 10.84, 4.82, 5.68};
    rc = xb_fit_line(ax, ay, 11, &f);
    test_cond("Anscombe I: coefficients", rc == 0 &&
                                              near(f.coef[0], 3.0001, 1e-4) &&
                                              near(f.coef[1], 0.5001, 1e-4));
    test_cond("Anscombe I: r2 and standard errors",
              near(f.r2, 0.6665, 1e-4) && near(f.se[1], 0.1179, 1e-4) &&
                  near(f.se[0], 1.1247, 1e-4));

    /* no intercept */
    rc = xb_fit_ols(lx, 1, lx, 11, 0, &f);
    test_cond("through the origin: y = x", rc == 0 && f.k == 1 &&
                                               near(f.coef[0], 1.0, 1e-12) &&
                                               near(f.r2, 1.0, 1e-12));

    /* exactly as many points as unknowns: exact fit, no standard errors */
    rc = xb_fit_line(lx, ly, 2, &f);
    test_cond("two points, two unknowns: exact, se NaN",
              rc == 0 && near(f.coef[1], 2.5, 1e-12) && isnan(f.se[0]) &&
                  isnan(f.se[1]) && isnan(f.sigma));

    /* constant y: slope 0, r2 defined as 1 */
    double cy[4] = {7, 7, 7, 7};
    rc = xb_fit_line(lx, cy, 4, &f);
    test_cond("constant y: slope 0, r2 1",
              rc == 0 && near(f.coef[1], 0, 1e-12) &&
                  near(f.coef[0], 7, 1e-12) && f.r2 == 1.0);

    /* degenerate input */
    test_cond("one point, two unknowns: ETOOFEW",
              xb_fit_line(lx, ly, 1, &f) == XB_FIT_ETOOFEW);
    test_cond("no points: ETOOFEW", xb_fit_line(lx, ly, 0, &f) ==
                                        XB_FIT_ETOOFEW);
    test_cond("R,W model with 2 points: ETOOFEW",
              xb_fit_ols(x, 2, y, 2, 1, &f) == XB_FIT_ETOOFEW);
    double cx[4] = {3, 3, 3, 3};
    test_cond("zero variance in x: ESINGULAR",
              xb_fit_line(cx, ly, 4, &f) == XB_FIT_ESINGULAR);
    double col[8] = {1, 1, 2, 2, 4, 4, 8, 8}; /* R == W on every point */
    test_cond("collinear R and W: ESINGULAR",
              xb_fit_ols(col, 2, ly, 4, 1, &f) == XB_FIT_ESINGULAR);
    double zx[3] = {0, 0, 0};
    test_cond("all-zero x without intercept: ESINGULAR",
              xb_fit_ols(zx, 1, ly, 3, 0, &f) == XB_FIT_ESINGULAR);
    double bad[3] = {1, NAN, 3};
    test_cond("NaN in x: EINVAL", xb_fit_line(bad, ly, 3, &f) ==
                                      XB_FIT_EINVAL);
    test_cond("infinity in y: EINVAL",
              xb_fit_line(lx, (double[]){1, INFINITY, 2}, 3, &f) ==
                  XB_FIT_EINVAL);
    test_cond("NULL and zero variables: EINVAL",
              xb_fit_line(NULL, ly, 3, &f) == XB_FIT_EINVAL &&
                  xb_fit_ols(lx, 0, ly, 3, 1, &f) == XB_FIT_EINVAL &&
                  xb_fit_ols(lx, XB_FIT_MAXVARS + 1, ly, 3, 1, &f) ==
                      XB_FIT_EINVAL &&
                  xb_fit_line(lx, ly, 3, NULL) == XB_FIT_EINVAL);
    test_cond("every error has a sentence",
              xb_fit_strerror(XB_FIT_ETOOFEW)[0] != 'u' &&
                  xb_fit_strerror(XB_FIT_ESINGULAR)[0] != 'u' &&
                  xb_fit_strerror(XB_FIT_EINVAL)[0] != 'u');
    return test_report();
}
