"""E-Divisive means change-point detection, as Hunter and Apache Otava do it.

The method (Matteson and James, arXiv 1306.4933; Fleming et al., "Hunter",
ICPE 2023, arXiv 2301.03034; Otava's docs/MATH.md), in two steps:

**Split.** Within a segment ``Z[s:e]`` every candidate pair ``s < τ < κ <= e``
divides it into ``X = Z[s:τ]`` and ``Y = Z[τ:κ]``; the energy-statistic
divergence

    Q(X, Y) = 2/(n+m) Σ|x - y| - 2m/((n+m)(n-1)) Σ_{i<k}|x_i - x_k|
                                - 2n/((n+m)(m-1)) Σ_{j<k}|y_j - y_k|

(n = |X|, m = |Y|) is largest where the two parts differ most.  The best τ
of every segment between the change points found so far is a candidate; the
candidate with the largest Q is tested (Student's t-test of the segment's
points left and right of τ, :mod:`.student_t`) and, if significant, becomes a
change point, and the search goes on; the first candidate that is not
significant ends it.  Q is O(L²) in a segment of L points, so, as Hunter
does, the series is searched in windows of ``window`` points that overlap
by half, and the change points of every window are pooled ("weak" change
points, tested at ten times the final p-value).

**Merge.** Every weak change point is re-tested against its neighbours (the
points between the change points on either side), and the weakest is
dropped until every one left passes: the largest p-value first while one is
above ``max_pvalue``, then the smallest change while one is below the
minimum.  Dropping one changes its neighbours' segments, so they are
re-tested each time.

What this module adds to Otava's merge test (docs/change-points.md):

- **the series' own noise**: a change must also be at least ``noise_factor``
  times the series' noise, the robust standard deviation (1.4826 × the median
  absolute deviation from each side's median) of the points on both sides; a
  t-test alone calls a change that is tiny next to the run-to-run scatter
  significant once there are enough points, and is fooled by one far outlier;
- **a minimum of points on each side** (``min_points``), so that one odd run
  at the end of a series is not a change yet;
- with the rank test, the split's energy statistic Q is computed on the window's
  points clipped to 3 robust standard deviations about their median
  (:func:`_clipped`): one far outlier then no longer decides where the split
  falls;
- the pooled standard deviation uses n - 1 (Otava passes NumPy's n
  standard deviation to SciPy, which expects n - 1, so its p-values are a
  little smaller);
- after dropping a change point, both its neighbours are re-tested (Otava
  0.8.0 re-tests the right neighbour and the one after it, and leaves the
  left neighbour's numbers stale).

**The significance test** is Student's t-test (``test="t"``, Hunter's and
Otava's), or the Mann–Whitney U test (``test="rank"``): the permutation test
of the rank sum, exact for up to 50 points without ties, its normal
approximation otherwise (:func:`.significance.mann_whitney_u`).  Ranks do not
let one far outlier hide a step or fake one; on the lab's own noise
(server/bench/changepoint_accuracy.py) they found more of the injected steps
with fewer false alerts, so the server uses them (``XACLAB_CHANGE_TEST``).
The size of a change is the change of the means either way.

``Options.otava_compatible`` undoes the last two differences above, for the cross-check only:
with it this module gives exactly apache-otava 0.8.0's change points on the
recorded reference series (server/tests/services/test_otava_reference.py,
made by server/bench/otava_crosscheck.py).  The server never sets it.

Everything here is deterministic: the same points give the same answer.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from xaclab_server.services.significance import mann_whitney_u
from xaclab_server.services.student_t import TTest, t_test

Floats = NDArray[np.float64]

# Hunter's first pass tests at ten times the final p-value (Otava: ×2 from 0.05 up).
WEAK_FACTOR = 10.0
MAD_TO_SD = 1.4826


@dataclass(frozen=True, slots=True)
class Options:
    max_pvalue: float = 0.001
    min_change: float = 0.0  # relative, 0.05 = 5 %
    noise_factor: float = 0.0
    min_points: int = 1
    window: int = 50
    test: Literal["t", "rank"] = "t"
    otava_compatible: bool = False

    def __post_init__(self) -> None:
        if not 0 < self.max_pvalue < 1:
            raise ValueError("max_pvalue must be between 0 and 1")
        if self.min_change < 0 or self.noise_factor < 0:
            raise ValueError("min_change and noise_factor must not be negative")
        if self.min_points < 1 or self.window < 4:
            raise ValueError("min_points must be at least 1 and window at least 4")


@dataclass(frozen=True, slots=True)
class Split:
    """A change point: ``index`` is the first point after the change."""

    index: int
    start: int  # the segments compared: values[start:index] and values[index:end]
    end: int
    test: TTest  # the sides' means and standard deviations
    p: float  # two-sided, by the options' significance test
    noise: float  # the robust standard deviation of the points about their side's median

    @property
    def change(self) -> float:
        """(mean after - mean before) / |mean before|: mean after / mean before - 1 for a
        positive mean, and of the shift's sign for a negative one (a fit's intercept may
        be); NaN when the mean before is 0."""
        before = self.test.mean_before
        return (self.test.mean_after - before) / abs(before) if before != 0 else math.nan

    @property
    def magnitude(self) -> float:
        """The larger of the forward and backward relative changes, as Otava's."""
        a, b = self.test.mean_before, self.test.mean_after
        if a == 0 or b == 0:
            return math.inf if a != b else 0.0
        return max(abs(b / a - 1.0), abs(a / b - 1.0))

    @property
    def shift(self) -> float:
        return abs(self.test.mean_after - self.test.mean_before)


def detect(values: Sequence[float] | Floats, options: Options) -> list[Split]:
    """The change points of ``values`` in order (the weak ones merged away)."""
    series = np.asarray(values, dtype=np.float64)
    if len(series) < 2:
        return []
    weak_p = options.max_pvalue * WEAK_FACTOR
    if options.max_pvalue >= 0.05:
        weak_p = options.max_pvalue * 2 if options.max_pvalue < 0.5 else options.max_pvalue
    weak = split_in_windows(series, options, max_pvalue=weak_p)
    return merge(series, weak, options)


def split_in_windows(series: Floats, options: Options, *, max_pvalue: float) -> list[int]:
    """The weak change points: E-Divisive in windows of ``window`` points overlapping by half."""
    found: set[int] = set()
    start, step = 0, max(1, options.window // 2)
    while start < len(series):
        end = min(start + options.window, len(series))
        local = divisive(series[start:end], options, max_pvalue=max_pvalue)
        found.update(start + i for i in local)
        start = max(max(local) + start if local else 0, start + step)
    return sorted(found)


def divisive(series: Floats, options: Options, *, max_pvalue: float) -> list[int]:
    """Recursive E-Divisive over the whole of ``series``: split at the best Q while significant.

    With the rank test, Q is computed on the window's points clipped to CLIP robust standard
    deviations about their median: on the raw values one far outlier (a run that caught a
    timer interrupt) holds most of the energy, and the best split lands beside it instead
    of at the step.  (Ranks would tame it too, but they erase the size of the gap at a step:
    two separated groups become one even ramp, and the split wanders off by a point.)"""
    basis = series
    if options.test == "rank" and not options.otava_compatible:
        basis = _clipped(series)
    distances = np.abs(basis[:, None] - basis[None, :])
    prefix = np.zeros((len(series) + 1, len(series) + 1))
    prefix[1:, 1:] = distances.cumsum(axis=0).cumsum(axis=1)
    cuts: list[int] = []
    best: dict[tuple[int, int], tuple[int, float] | None] = {}
    while True:
        bounds = [0, *cuts, len(series)]
        candidates = []
        for s, e in zip(bounds, bounds[1:], strict=False):
            if (s, e) not in best:
                best[(s, e)] = best_split(prefix, s, e)
            found = best[(s, e)]
            if found is not None:
                candidates.append((found[1], found[0], s, e))
        if not candidates:
            return cuts
        _q, tau, s, e = max(candidates)
        if p_value(series[s:tau], series[tau:e], options) > max_pvalue:
            return cuts
        cuts = sorted([*cuts, tau])


CLIP = 3.0  # robust standard deviations about the median (docs/change-points.md)


def _clipped(series: Floats) -> Floats:
    """The points, those farther than CLIP robust standard deviations (1.4826 x the median
    absolute deviation) from their median pulled in to that distance.  A step inside the
    window widens the deviation with it, so the two sides' points are left as they are."""
    middle = float(np.median(series))
    spread = MAD_TO_SD * float(np.median(np.abs(series - middle)))
    if spread == 0:
        return series
    return np.clip(series, middle - CLIP * spread, middle + CLIP * spread)


def best_split(prefix: Floats, start: int, end: int) -> tuple[int, float] | None:
    """(τ, Q) maximising Q over start < τ < κ <= end; ``prefix`` is the 2-D prefix sum of the
    distance matrix (``prefix[i, j]`` = Σ of distances[:i, :j])."""
    if end - start < 2:
        return None
    tau, kappa = np.meshgrid(
        np.arange(start + 1, end), np.arange(start + 2, end + 1), indexing="ij"
    )
    s = np.full_like(tau, start)
    # Sums of distances over rectangles of the matrix: rows [r0, r1) by columns [c0, c1).
    cross = _rect(prefix, s, tau, tau, kappa)
    within_x = _rect(prefix, s, tau, s, tau) / 2.0
    within_y = _rect(prefix, tau, kappa, tau, kappa) / 2.0
    n = (tau - start).astype(np.float64)
    m = (kappa - tau).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = (
            2.0 / (n + m) * cross
            - np.where(n > 1, 2.0 * m / ((n + m) * (n - 1)) * within_x, 0.0)
            - np.where(m > 1, 2.0 * n / ((n + m) * (m - 1)) * within_y, 0.0)
        )
    q = np.where(kappa > tau, q, -np.inf)
    row, col = np.unravel_index(int(np.argmax(q)), q.shape)
    return start + 1 + int(row), float(q[row, col])


Indexes = NDArray[np.int64]


def _rect(prefix: Floats, r0: Indexes, r1: Indexes, c0: Indexes, c1: Indexes) -> Floats:
    total: Floats = prefix[r1, c1] - prefix[r0, c1] - prefix[r1, c0] + prefix[r0, c0]
    return total


def merge(series: Floats, weak: Sequence[int], options: Options) -> list[Split]:
    """Drop the weakest change point until every one left passes every test."""
    indexes = sorted(set(weak))
    splits = [_tested(series, indexes, k, options) for k in range(len(indexes))]
    while splits:
        failing = [s for s in splits if s.p >= options.max_pvalue]
        if failing:
            weakest = max(failing, key=lambda s: s.p)
        else:
            small = [s for s in splits if not _large_enough(s, options)]
            if not small:
                return splits
            weakest = min(small, key=lambda s: (s.magnitude, s.shift))
        k = splits.index(weakest)
        del indexes[k]
        del splits[k]
        for neighbour in (k, k + 1) if options.otava_compatible else (k - 1, k):
            if 0 <= neighbour < len(splits):
                splits[neighbour] = _tested(series, indexes, neighbour, options)
    return splits


def _large_enough(split: Split, options: Options) -> bool:
    if split.test.n_before < options.min_points or split.test.n_after < options.min_points:
        return False
    if not split.magnitude > options.min_change:
        return False
    return split.shift >= options.noise_factor * split.noise


def p_value(before: Floats, after: Floats, options: Options) -> float:
    """The two-sided p-value of the points before against those after, by the options' test."""
    if options.test == "rank":
        return mann_whitney_u(before, after).p
    return t_test(before, after, ddof=0 if options.otava_compatible else 1).p


def _tested(series: Floats, indexes: Sequence[int], k: int, options: Options) -> Split:
    start = indexes[k - 1] if k > 0 else 0
    end = indexes[k + 1] if k + 1 < len(indexes) else len(series)
    index = indexes[k]
    before, after = series[start:index], series[index:end]
    return Split(
        index=index,
        start=start,
        end=end,
        test=t_test(before, after),
        p=p_value(before, after, options),
        noise=_noise(before, after),
    )


def _noise(before: Floats, after: Floats) -> float:
    residuals = np.concatenate([before - np.median(before), after - np.median(after)])
    return float(MAD_TO_SD * np.median(np.abs(residuals)))
