"""Student's two-sample t-test, two-sided, with the pooled variance.

The change-point detector (:mod:`.edivisive`) asks whether the points on the
two sides of a candidate split have the same mean, as Hunter and Apache Otava
do.  The server has no SciPy, so the t distribution's tail comes from the
regularized incomplete beta function, ``P(|T| > t) = I_x(df/2, 1/2)`` with
``x = df / (df + t²)``, evaluated by its continued fraction (modified Lentz;
Press et al., *Numerical Recipes*, 6.4).  The tests hold it to SciPy's
``ttest_ind`` within 1e-9.

Degenerate sides are answered without dividing by zero: two sides without
any spread are different for certain when their means differ (p = 0) and the
same otherwise (p = 1); fewer than three points in all cannot be tested
(p = 1).
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Floats = NDArray[np.float64]

_CF_ITERATIONS = 300
_CF_EPSILON = 1e-15
_TINY = 1e-300


@dataclass(frozen=True, slots=True)
class TTest:
    mean_before: float
    mean_after: float
    sd_before: float  # sample standard deviations (n - 1); 0 for a single point
    sd_after: float
    n_before: int
    n_after: int
    p: float  # two-sided


def t_test(
    before: Sequence[float] | Floats, after: Sequence[float] | Floats, *, ddof: int = 1
) -> TTest:
    """Student's t-test of ``before`` against ``after`` (both non-empty).  ``ddof=0`` takes
    the standard deviations as apache-otava does (for the cross-check only)."""
    a = np.asarray(before, dtype=np.float64)
    b = np.asarray(after, dtype=np.float64)
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        raise ValueError("a t-test needs a point on each side")
    m1, m2 = float(a.mean()), float(b.mean())
    s1 = float(a.std(ddof=ddof)) if n1 > 1 else 0.0
    s2 = float(b.std(ddof=ddof)) if n2 > 1 else 0.0
    return TTest(m1, m2, s1, s2, n1, n2, _p_value(m1, m2, s1, s2, n1, n2))


def _p_value(m1: float, m2: float, s1: float, s2: float, n1: int, n2: int) -> float:
    df = n1 + n2 - 2
    if df < 1:
        return 1.0
    pooled = ((n1 - 1) * s1 * s1 + (n2 - 1) * s2 * s2) / df
    if pooled <= 0.0:
        return 0.0 if m1 != m2 else 1.0
    t = (m2 - m1) / math.sqrt(pooled * (1.0 / n1 + 1.0 / n2))
    return two_sided_p(t, df)


def two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom."""
    if math.isnan(t):
        return 1.0
    if math.isinf(t):
        return 0.0
    return min(1.0, incomplete_beta(df / (df + t * t), df / 2.0, 0.5))


def incomplete_beta(x: float, a: float, b: float) -> float:
    """The regularized incomplete beta function I_x(a, b) for 0 <= x <= 1, a, b > 0."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    # The continued fraction converges quickly for x < (a + 1) / (a + b + 2);
    # otherwise use the symmetry I_x(a, b) = 1 - I_{1-x}(b, a).
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _continued_fraction(x, a, b) / a
    return 1.0 - front * _continued_fraction(1.0 - x, b, a) / b


def _continued_fraction(x: float, a: float, b: float) -> float:
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _CF_ITERATIONS + 1):
        m2 = 2 * m
        for numerator in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) < _CF_EPSILON:
            break
    return h
