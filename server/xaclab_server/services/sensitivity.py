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
change.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from xaclab_server.services.edivisive import MAD_TO_SD, Options

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


def relative_noise(values: Sequence[float], cuts: Sequence[int]) -> float | None:
    """The robust noise of ``values`` about their segments' medians (cut before each index
    in ``cuts``), relative to the median of all; None when that median is 0."""
    series = np.asarray(values, dtype=np.float64)
    middle = float(np.median(series))
    if middle == 0:
        return None
    bounds = [0, *sorted(c for c in set(cuts) if 0 < c < len(series)), len(series)]
    residuals = np.concatenate(
        [series[s:e] - np.median(series[s:e]) for s, e in zip(bounds, bounds[1:], strict=False)]
    )
    return float(MAD_TO_SD * np.median(np.abs(residuals)) / abs(middle))


def judged_noise(values: Sequence[float], cuts: Sequence[int]) -> float | None:
    """relative_noise, or None when there are fewer than MIN_POINTS values to judge it."""
    if len(values) < MIN_POINTS:
        return None
    noise = relative_noise(values, cuts)
    return noise if noise is not None and math.isfinite(noise) else None


def sensitivity(values: Sequence[float], cuts: Sequence[int], options: Options) -> Sensitivity:
    """What ``values`` (the points the detector reads, oldest first) can show, with the
    change points found before the indexes in ``cuts``."""
    count = len(values)
    if count < MIN_POINTS:
        return Sensitivity(
            count, None, {}, f"{count} of the {MIN_POINTS} points it takes to judge the noise"
        )
    noise = judged_noise(values, cuts)
    if noise is None:
        return Sensitivity(count, None, {}, "the median is 0, so a relative step means nothing")
    smallest = {after: smallest_step(noise, after, options) for after in AFTER}
    return Sensitivity(count, noise, smallest, None)
