"""What a series can show: its run-to-run noise, and the smallest step the detector finds in it.

"The detector found no change" means little without the size of change it would have
found.  That size follows from the series' own noise σ (relative to the median) and from
the detector's three rules (:mod:`.edivisive`): the significance test gives
p < ``max_pvalue``, the change exceeds ``min_change``, and the shift is at least
``noise_factor`` × the noise measured beside it.  For a step with ``m`` points after it
and ``window - m`` before, the shift is measured to within se = σ·sqrt(1/m + 1/(window-m)),
and the noise to within about 1.17·σ/sqrt(window) (the robust standard deviation, from
the median absolute deviation).  Each rule passes in 9 cases in 10 (z = z(0.9)) once

    test:   step >= (z(1 - p/2) + z) × se [× sqrt(π/3) for the rank test, whose
            efficiency on normal noise is 3/π of the t-test's]
    change: step >= min_change + z × se
    noise:  step >= noise_factor × σ + z × sqrt(se² + noise_factor² × 1.36 σ²/window)

and the smallest step is the largest of the three.  On Gaussian noise of 1-8 % the
detector as shipped found 76-90 % of the steps of exactly that size
(tests/services/test_sensitivity.py): "4 steps in 5".  On the lab's recorded noise
(server/bench/changepoint_accuracy.py, which prints the figures) it found most of the
injected steps at or above this size and few below it.

The noise is the robust standard deviation (1.4826 × the median absolute deviation)
of the points about the median of their stretch, the stretches cut at the change points
found, relative to the median of all points, as :mod:`.edivisive` measures it beside a
change.  Unless the points are not a bell: when that is under half the standard
deviation of the same deviations winsorized at their 5th and 95th percentiles (scaled to
σ for normal noise), the latter is the noise.  That happens when most points sit on one
or two steps of a coarse clock (a 100 ns search timed by a clock that moves 10 ns at a
time reads 90 or 100: median absolute deviation 0) or on two modes.  The MAD then
says "no noise" and promises steps of 3 % that the detector misses as often as not; on
the lab's recorded noise this took the share found of the steps at or above the
smallest step from 0.896 to 0.936 (docs/change-points.md).
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import NDArray

from xaclab_server.services.edivisive import MAD_TO_SD, Options

WINSOR = 0.05  # each tail of the deviations clipped in the fallback spread
NOT_A_BELL = 0.5  # the MAD's spread under this share of the winsorized one: use the latter
RULE_POWER = 0.9  # each rule passes this often; all three together about 4 times in 5
MAD_VARIANCE = 1.36  # n × the variance of the MAD's robust sd over σ², normal noise
MIN_POINTS = 10  # fewer points say too little about the noise
AFTER = (10, 25)  # points after a step: soon after it, and half a window on


@dataclass(frozen=True, slots=True)
class Sensitivity:
    """``noise`` and ``smallest`` are relative to the median (0.05 = 5 %); both are None
    with ``reason`` saying why when the series cannot be judged yet."""

    points: int
    noise: float | None
    smallest: dict[int, float]  # points after the step -> the smallest step found
    reason: str | None
    not_a_bell: bool = False  # the noise is the winsorized spread (module docstring)

    @property
    def noise_known_to(self) -> float:
        """The noise's own standard error over the noise (normal noise): the robust standard
        deviation from ``points`` points is known to about ±1.17/sqrt(points) of itself."""
        return math.sqrt(MAD_VARIANCE / self.points) if self.points else math.inf


def smallest_step(noise: float, after: int, options: Options) -> float:
    """The smallest relative step the detector finds in most cases in a series of this
    relative noise, with ``after`` points after the step in a window of
    ``options.window`` (at least ``options.min_points`` on each side)."""
    # Settings may ask for more points a side than a window holds: keep one at least.
    after = min(max(after, options.min_points), max(options.window - options.min_points, 1))
    before = max(options.window - after, 1)
    normal = NormalDist()
    z = normal.inv_cdf(RULE_POWER)
    se = noise * math.sqrt(1 / after + 1 / before)
    tested = (normal.inv_cdf(1 - options.max_pvalue / 2) + z) * se
    if options.test == "rank":
        tested *= math.sqrt(math.pi / 3)
    factor = options.noise_factor
    gated = factor * noise + z * math.sqrt(
        se**2 + factor**2 * MAD_VARIANCE * noise**2 / (after + before)
    )
    return max(options.min_change + z * se, gated, tested)


@dataclass(frozen=True, slots=True)
class Noise:
    relative: float  # relative to the median of all points
    not_a_bell: bool  # judged by the winsorized spread, not the median absolute deviation


def relative_noise(values: Sequence[float], cuts: Sequence[int]) -> float | None:
    """The robust noise of ``values`` about their segments' medians (cut before each index
    in ``cuts``), relative to the median of all; None when that median is 0."""
    noise = measure_noise(values, cuts)
    return None if noise is None else noise.relative


def measure_noise(values: Sequence[float], cuts: Sequence[int]) -> Noise | None:
    """relative_noise, and which of the two spreads it is."""
    series = np.asarray(values, dtype=np.float64)
    middle = float(np.median(series))
    if middle == 0:
        return None
    bounds = [0, *sorted(c for c in set(cuts) if 0 < c < len(series)), len(series)]
    residuals = np.concatenate(
        [series[s:e] - np.median(series[s:e]) for s, e in zip(bounds, bounds[1:], strict=False)]
    )
    robust = MAD_TO_SD * float(np.median(np.abs(residuals)))
    winsorized = winsorized_sd(residuals)
    not_a_bell = robust < NOT_A_BELL * winsorized
    return Noise((winsorized if not_a_bell else robust) / abs(middle), not_a_bell)


def winsorized_sd(deviations: NDArray[np.float64]) -> float:
    """The root mean square of ``deviations`` clipped to their WINSOR and 1 - WINSOR
    quantiles, divided by what that gives for standard normal deviations (0.912)."""
    low, high = np.quantile(deviations, [WINSOR, 1 - WINSOR])
    clipped = np.clip(deviations, low, high)
    return float(np.sqrt(np.mean(clipped**2))) / _WINSORIZED_NORMAL


def _winsorized_normal() -> float:
    edge = NormalDist().inv_cdf(1 - WINSOR)
    inside = (1 - 2 * WINSOR) - 2 * edge * NormalDist().pdf(edge)  # E[Z²; |Z| < edge]
    return math.sqrt(inside + 2 * WINSOR * edge**2)


_WINSORIZED_NORMAL = _winsorized_normal()


def judged_noise(values: Sequence[float], cuts: Sequence[int]) -> float | None:
    """relative_noise, or None when there are fewer than MIN_POINTS values to judge it."""
    if len(values) < MIN_POINTS:
        return None
    noise = _finite_noise(values, cuts)
    return None if noise is None else noise.relative


def _finite_noise(values: Sequence[float], cuts: Sequence[int]) -> Noise | None:
    """measure_noise, or None when there is none (a median of 0) or it is not finite."""
    noise = measure_noise(values, cuts)
    return noise if noise is not None and math.isfinite(noise.relative) else None


def sensitivity(values: Sequence[float], cuts: Sequence[int], options: Options) -> Sensitivity:
    """What ``values`` (the points the detector reads, oldest first) can show, with the
    change points found before the indexes in ``cuts``."""
    count = len(values)
    if count < MIN_POINTS:
        return Sensitivity(
            count, None, {}, f"{count} of the {MIN_POINTS} points it takes to judge the noise"
        )
    measured = _finite_noise(values, cuts)
    if measured is None:
        return Sensitivity(count, None, {}, "the median is 0, so a relative step means nothing")
    noise = measured.relative
    smallest = {after: smallest_step(noise, after, options) for after in AFTER}
    return Sensitivity(count, noise, smallest, None, measured.not_a_bell)
