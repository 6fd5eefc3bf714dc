"""Is a difference real? A Mann–Whitney U test and a bootstrap interval for a ratio.

:func:`mann_whitney_u` is two-sided.  With no ties and at most
:data:`EXACT_MAX_TOTAL` samples in all it is exact (the U distribution is
counted, not approximated); otherwise it uses the normal approximation with
the tie correction and a continuity correction of 0.5 (the same definitions
as SciPy's ``mannwhitneyu`` with ``method="exact"`` and ``"asymptotic"``,
which the tests use as an oracle).

:func:`bootstrap_ratio` resamples both groups with replacement
(:data:`RESAMPLES` times, from a fixed seed, so a page shows the same interval
every time) and takes the 2.5th and 97.5th percentiles of
``median(b) / median(a)`` (or of the means).  Groups larger than
:data:`BOOTSTRAP_MAX_SAMPLES` are first thinned to a seeded random subset of
that size, which only widens the interval.

Within one comparison the pairs' p-values are adjusted together with
Benjamini–Hochberg (:func:`benjamini_hochberg`), which keeps the expected share
of false discoveries among the pairs called different at :data:`ALPHA`.  A
difference is called significant only when its q < :data:`ALPHA` **and** the
interval excludes 1; anything else is reported as "no significant difference".

Histograms (results of more than 100,000 samples) have no raw values: both
functions also take a :class:`.histogram.Histogram` for each group, and then
work on its bucket representatives (midpoints within 2^-8 of every value in
the bucket, clamped to [min, max]).  :func:`mann_whitney_u_binned` computes U
from the bucket counts of two histograms, values in one bucket counting as
ties (always the normal approximation: such groups are far above
:data:`EXACT_MAX_TOTAL`); the bootstrap draws its thinned group of
:data:`BOOTSTRAP_MAX_SAMPLES` from the representatives, weighted by the
counts, and takes the full group's statistic from the histogram (the mean
exactly, the median within 2^-8).
"""

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from xaclab_contracts.validity import FDR_LEVEL

from xaclab_server.services.histogram import Histogram

ALPHA = FDR_LEVEL
RESAMPLES = 2000
SEED = 20261123
EXACT_MAX_TOTAL = 50
BOOTSTRAP_MAX_SAMPLES = 1000
CHUNK_CELLS = 1 << 21

Floats = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class MannWhitney:
    u: float  # U of the first group
    p: float  # two-sided
    method: Literal["exact", "asymptotic"]


@dataclass(frozen=True, slots=True)
class RatioInterval:
    ratio: float
    low: float
    high: float


def _ranks(values: Floats) -> tuple[Floats, Floats]:
    """Average ranks (1-based) of ``values`` and the sizes of the tie groups."""
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    sizes = np.diff(np.r_[starts, len(ordered)]).astype(np.float64)
    # Each group's average rank is (first + last) / 2 in 1-based ranks.
    average = starts + (sizes + 1) / 2
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.repeat(average, sizes.astype(np.int64))
    return ranks, sizes


def mann_whitney_u(a: Sequence[float] | Floats, b: Sequence[float] | Floats) -> MannWhitney:
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    m, n = len(x), len(y)
    if m == 0 or n == 0:
        raise ValueError("both groups need at least one sample")
    ranks, ties = _ranks(np.concatenate([x, y]))
    u1 = float(ranks[:m].sum() - m * (m + 1) / 2)
    has_ties = bool((ties > 1).any())
    if not has_ties and m + n <= EXACT_MAX_TOTAL:
        return MannWhitney(u=u1, p=_exact_p(u1, m, n), method="exact")
    return _asymptotic(u1, m, n, ties)


def mann_whitney_u_binned(a: Histogram, b: Histogram) -> MannWhitney:
    """The U test of two histograms' bucket representatives: the same U, tie correction and p
    as :func:`mann_whitney_u` of the representatives repeated by their counts."""
    index = np.union1d(a.index, b.index)
    counts_a = np.zeros(len(index), dtype=np.float64)
    counts_b = np.zeros(len(index), dtype=np.float64)
    counts_a[np.searchsorted(index, a.index)] = a.counts
    counts_b[np.searchsorted(index, b.index)] = b.counts
    # A pair (x in A, y in B) adds 1 to U when y's bucket is lower, 1/2 when it is the same.
    below_b = np.cumsum(counts_b) - counts_b
    u1 = float((counts_a * (below_b + counts_b / 2)).sum())
    return _asymptotic(u1, a.count, b.count, counts_a + counts_b)


def _asymptotic(u1: float, m: int, n: int, ties: Floats) -> MannWhitney:
    total = m + n
    mu = m * n / 2
    tie_term = float((ties**3 - ties).sum()) / (total * (total - 1))
    variance = m * n / 12 * ((total + 1) - tie_term)
    if variance <= 0:  # every value equal: no evidence of any difference
        return MannWhitney(u=u1, p=1.0, method="asymptotic")
    u_big = max(u1, m * n - u1)
    z = (u_big - mu - 0.5) / math.sqrt(variance)
    p = min(1.0, math.erfc(z / math.sqrt(2)))
    return MannWhitney(u=u1, p=p, method="asymptotic")


def _exact_p(u: float, m: int, n: int) -> float:
    cdf = _exact_cdf(m, n)
    k = int(round(u))
    below = cdf[k]
    above = 1.0 - (cdf[k - 1] if k > 0 else 0.0)
    return float(min(1.0, 2 * min(below, above)))


@functools.lru_cache(maxsize=2048)
def _exact_cdf(m: int, n: int) -> Floats:
    """P(U <= u) for u = 0..m·n; cached: the change-point detector asks for the same sizes
    again and again."""
    counts = _u_counts(m, n)
    cdf: Floats = np.cumsum(counts) / counts.sum()
    cdf.flags.writeable = False
    return cdf


def _u_counts(m: int, n: int) -> Floats:
    """How many arrangements give each U in 0..m·n (the Gaussian binomial's coefficients)."""
    # f(i, j) = f(i-1, j) shifted by j + f(i, j-1); a row per i, built over j.
    rows = [np.ones(1, dtype=np.float64) for _ in range(n + 1)]  # f(0, j) = [1]
    for i in range(1, m + 1):
        new = [np.ones(1, dtype=np.float64)]  # f(i, 0) = [1]
        for j in range(1, n + 1):
            size = i * j + 1
            out = np.zeros(size, dtype=np.float64)
            prev_i = rows[j]  # f(i-1, j)
            out[j : j + len(prev_i)] += prev_i
            prev_j = new[j - 1]  # f(i, j-1)
            out[: len(prev_j)] += prev_j
            new.append(out)
        rows = new
    return rows[n]


Group = Sequence[float] | Floats | Histogram


def bootstrap_ratio(
    a: Group,
    b: Group,
    *,
    statistic: Literal["median", "mean"] = "median",
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> RatioInterval:
    """``stat(b) / stat(a)`` with a percentile bootstrap interval; NaN bounds if undefined."""
    rng = np.random.default_rng(seed)
    base_a, base_b = group_statistic(a, statistic), group_statistic(b, statistic)
    ratio = base_b / base_a if base_a != 0 else math.nan
    x, y = _thin(a, rng), _thin(b, rng)
    sa = _resampled(x, rng, resamples, statistic)
    sb = _resampled(y, rng, resamples, statistic)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = sb / sa
    ratios = ratios[np.isfinite(ratios)]
    if len(ratios) < resamples // 2:
        return RatioInterval(ratio=ratio, low=math.nan, high=math.nan)
    low, high = np.percentile(ratios, [2.5, 97.5])
    return RatioInterval(ratio=ratio, low=float(low), high=float(high))


def group_statistic(group: Group, statistic: Literal["median", "mean"]) -> float:
    """The median or mean of a group: of its samples, or read from its histogram."""
    if isinstance(group, Histogram):
        return group.mean if statistic == "mean" else group.median()
    values = np.asarray(group, dtype=np.float64)
    return float(np.median(values) if statistic == "median" else np.mean(values))


def _thin(group: Group, rng: np.random.Generator) -> Floats:
    if isinstance(group, Histogram):
        counts = group.counts
        if group.count > BOOTSTRAP_MAX_SAMPLES:
            # Drawn without replacement, as below: how many of the thinned group per bucket.
            counts = rng.multivariate_hypergeometric(
                group.counts, BOOTSTRAP_MAX_SAMPLES, method="marginals"
            )
        return np.repeat(group.representatives(), counts)
    values = np.asarray(group, dtype=np.float64)
    if len(values) <= BOOTSTRAP_MAX_SAMPLES:
        return values
    return rng.choice(values, size=BOOTSTRAP_MAX_SAMPLES, replace=False)


def _resampled(values: Floats, rng: np.random.Generator, resamples: int, statistic: str) -> Floats:
    n = len(values)
    out = np.empty(resamples, dtype=np.float64)
    step = max(1, CHUNK_CELLS // n)
    for start in range(0, resamples, step):
        rows = min(step, resamples - start)
        draws = values[rng.integers(0, n, size=(rows, n))]
        out[start : start + rows] = (
            np.median(draws, axis=1) if statistic == "median" else draws.mean(axis=1)
        )
    return out


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg q-values, in the order given: q(i) = min over ranks r >= rank(i) of
    p(r) · m / r, at most 1 (the adjusted p-values of R's ``p.adjust(method="BH")``)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    q = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, p_values[i] * m / rank)
        q[i] = running
    return q


def verdict(
    *, q: float, interval: RatioInterval, better: str, alpha: float = ALPHA
) -> tuple[bool, str]:
    """(significant, sentence) for B relative to A, from the pair's q-value."""
    covers_one = not (interval.low > 1 or interval.high < 1)
    if math.isnan(interval.low) or q >= alpha or covers_one:
        return False, "no significant difference"
    change = interval.ratio - 1
    improved = (change < 0) == (better == "lower")
    word = "better" if improved else "worse"
    return True, f"B is {abs(change) * 100:.1f}% {'lower' if change < 0 else 'higher'} ({word})"
