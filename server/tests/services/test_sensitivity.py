"""What a series can show (services/sensitivity.py): its noise, cut at its change points,
and the smallest step the detector finds in it, checked against the detector itself."""

import math
from dataclasses import replace

import numpy as np
import pytest

from xaclab_server.services import edivisive
from xaclab_server.services.sensitivity import (
    MIN_POINTS,
    relative_noise,
    sensitivity,
    smallest_step,
)

SHIPPED = edivisive.Options(
    max_pvalue=0.001, min_change=0.03, noise_factor=1.0, min_points=3, window=50, test="rank"
)
# From a table of the normal distribution: z(1 - 0.001/2) and z(0.9).
Z_TEST, Z_RULE = 3.2905, 1.2816
RANK = math.sqrt(math.pi / 3)  # the rank test's efficiency on normal noise is 3/pi


def test_the_smallest_step_is_the_largest_of_the_three_rules() -> None:
    # Quiet: the minimum change rules.
    se = 0.005 * math.sqrt(1 / 25 + 1 / 25)
    assert smallest_step(0.005, 25, SHIPPED) == pytest.approx(0.03 + Z_RULE * se, rel=1e-4)
    # Noisy, 10 points after the step: the significance test rules ...
    se = 0.05 * math.sqrt(1 / 10 + 1 / 40)
    tested = (Z_TEST + Z_RULE) * se * RANK
    assert smallest_step(0.05, 10, SHIPPED) == pytest.approx(tested, rel=1e-4)
    # ... the t-test needs less on normal noise ...
    t_test = replace(SHIPPED, test="t")
    assert smallest_step(0.05, 10, t_test) == pytest.approx(tested / RANK, rel=1e-4)
    # ... and half a window after it, the noise rule: a shift of at least the noise,
    # both measured with their error.
    se = 0.05 * math.sqrt(1 / 25 + 1 / 25)
    gated = 0.05 + Z_RULE * math.sqrt(se**2 + 1.36 * 0.05**2 / 50)
    assert smallest_step(0.05, 25, SHIPPED) == pytest.approx(gated, rel=1e-4)
    strict = replace(SHIPPED, noise_factor=3.0)
    gated = 0.15 + Z_RULE * math.sqrt(se**2 + 9 * 1.36 * 0.05**2 / 50)
    assert smallest_step(0.05, 25, strict) == pytest.approx(gated, rel=1e-4)


def test_fewer_points_after_the_step_need_a_larger_step() -> None:
    steps = [smallest_step(0.04, after, SHIPPED) for after in (3, 5, 10, 25)]
    assert steps == sorted(steps, reverse=True) and steps[0] > 1.5 * steps[-1]
    # Never fewer than min_points on a side, whatever is asked.
    assert smallest_step(0.04, 1, SHIPPED) == smallest_step(0.04, 3, SHIPPED)
    assert smallest_step(0.04, 49, SHIPPED) == smallest_step(0.04, 47, SHIPPED)
    # Settings that ask for more points a side than a window holds still give a number.
    odd = replace(SHIPPED, min_points=40, window=50)
    assert math.isfinite(smallest_step(0.04, 10, odd))


def _found(values: list[float], at: int) -> bool:
    return any(abs(s.index - at) <= 2 for s in edivisive.detect(values, SHIPPED))


@pytest.mark.parametrize(("noise", "after"), [(0.02, 10), (0.04, 25), (0.08, 10)])
def test_the_detector_finds_most_steps_of_that_size_and_few_of_half_of_it(
    noise: float, after: int
) -> None:
    """Gaussian noise, a step ``after`` points from the end of 50: the detector as shipped
    finds most steps of the predicted size (about 4 in 5) and few of half of it."""
    rng = np.random.default_rng(7)
    at = 50 - after
    predicted = smallest_step(noise, after, SHIPPED)
    found = {1.0: 0, 0.5: 0}
    trials = 80
    for _ in range(trials):
        base = 100 * (1 + noise * rng.standard_normal(50))
        for share in found:
            shift = share * predicted * 100
            stepped = [v + (shift if i >= at else 0.0) for i, v in enumerate(base)]
            found[share] += _found(stepped, at)
    assert found[1.0] >= 0.65 * trials, found
    assert found[0.5] <= 0.25 * trials, found


def test_the_noise_is_measured_within_the_stretches_between_change_points() -> None:
    rng = np.random.default_rng(3)
    values = list(100 + rng.standard_normal(40))  # 1 % noise about 100 ...
    values[20:] = [v + 50 for v in values[20:]]  # ... and a step of 50 at point 20
    within = relative_noise(values, [20])
    assert within is not None and 0.005 < within < 0.02
    across = relative_noise(values, [])
    assert across is not None and across > 10 * within
    # Cuts at the ends or repeated change nothing.
    assert relative_noise(values, [0, 20, 20, 40]) == within


def test_a_series_too_short_or_centred_on_zero_is_not_judged() -> None:
    short = sensitivity([1.0] * (MIN_POINTS - 1), [], SHIPPED)
    assert short.noise is None and short.smallest == {}
    assert short.reason is not None and f"{MIN_POINTS - 1} of the {MIN_POINTS}" in short.reason
    centred = sensitivity([-1.0, 1.0] * MIN_POINTS, [], SHIPPED)
    assert centred.noise is None and centred.reason is not None and "median is 0" in centred.reason
    judged = sensitivity([10.0, 10.2, 9.8, 10.1, 9.9] * 2, [], SHIPPED)
    assert judged.reason is None and judged.noise is not None and judged.noise > 0
    assert sorted(judged.smallest) == [10, 25]
    assert judged.noise_known_to == pytest.approx(math.sqrt(1.36 / 10))
    assert judged.smallest[10] >= judged.smallest[25] >= 0.03


def _clock_steps(rng: np.random.Generator, mean: float, shift: float, at: int) -> list[float]:
    """50 runs of a ~95 ns operation timed by a clock that moves 10 ns at a time: each run
    reads 90, 100 or 110; from run ``at`` on the operation takes ``shift`` ns longer."""
    true = mean + 3.0 * rng.standard_normal(50)
    true[at:] += shift
    return [float(v) for v in 10.0 * np.round(true / 10.0)]


def test_points_on_a_few_clock_steps_are_judged_by_their_spread_not_their_mad() -> None:
    # Most points on one step: the median absolute deviation is 0.
    values = [90.0] * 30 + [100.0] * 15 + [110.0] * 5
    assert np.median(np.abs(np.asarray(values) - 90.0)) == 0
    # The deviations winsorized at their 5th and 95th percentiles (nothing clipped here),
    # scaled to sigma for normal noise (0.912), relative to the median.
    spread = math.sqrt((15 * 10.0**2 + 5 * 20.0**2) / 50) / 0.91174
    assert relative_noise(values, []) == pytest.approx(spread / 90.0, rel=1e-3)


@pytest.mark.parametrize("mean", [93.0, 96.0])
def test_on_clock_steps_the_predicted_step_is_found_and_a_smaller_promise_would_not_be(
    mean: float,
) -> None:
    rng = np.random.default_rng(0)
    flat = _clock_steps(rng, mean, 0.0, 50)
    median = float(np.median(flat))
    assert np.median(np.abs(np.asarray(flat) - median)) == 0  # the MAD would say: no noise
    noise = relative_noise(flat, [])
    assert noise is not None and noise > 0.03
    trials = 60
    for after in (10, 25):
        found = {}
        for size in (SHIPPED.min_change, smallest_step(noise, after, SHIPPED)):
            found[size] = sum(
                _found(_clock_steps(rng, mean, size * median, 50 - after), 50 - after)
                for _ in range(trials)
            )
        promised_by_the_mad, predicted = found.values()
        assert predicted >= 0.65 * trials, found
        assert promised_by_the_mad <= 0.3 * trials, found
