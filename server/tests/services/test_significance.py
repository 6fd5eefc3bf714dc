"""The Mann–Whitney U test and the bootstrap interval, against SciPy as an oracle."""

import math

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from xaclab_server.services import histogram
from xaclab_server.services.significance import (
    RatioInterval,
    bootstrap_ratio,
    group_statistic,
    mann_whitney_u,
    mann_whitney_u_binned,
    verdict,
)


@pytest.mark.parametrize(
    ("m", "n", "shift"), [(3, 4, 0.0), (5, 7, 1.0), (10, 12, 0.5), (20, 25, 0.4)]
)
def test_exact_small_samples_match_scipy(m: int, n: int, shift: float) -> None:
    rng = np.random.default_rng(m * 100 + n)
    a, b = rng.normal(0, 1, m), rng.normal(shift, 1, n)
    ours = mann_whitney_u(a, b)
    theirs = mannwhitneyu(a, b, method="exact")
    assert ours.method == "exact"
    assert ours.u == theirs.statistic
    assert ours.p == pytest.approx(theirs.pvalue, rel=1e-9)


@pytest.mark.parametrize(("m", "n"), [(300, 200), (40, 41), (1000, 5)])
def test_ties_and_large_samples_use_the_corrected_normal_approximation(m: int, n: int) -> None:
    rng = np.random.default_rng(m + n)
    a, b = np.round(rng.normal(0, 1, m), 1), np.round(rng.normal(0.2, 1, n), 1)
    ours = mann_whitney_u(a, b)
    theirs = mannwhitneyu(a, b, method="asymptotic")
    assert ours.method == "asymptotic"
    assert ours.u == theirs.statistic
    assert ours.p == pytest.approx(theirs.pvalue, rel=1e-9)


def test_known_textbook_value() -> None:
    # Every a below every b: U = 0 and the exact two-sided p is 2 / C(8, 4) = 1/35.
    result = mann_whitney_u([1, 2, 3, 4], [5, 6, 7, 8])
    assert result.u == 0 and result.p == pytest.approx(2 / 70)
    assert mann_whitney_u([1, 1, 1], [1, 1]).p == 1.0


def test_bootstrap_is_seeded_and_covers_the_truth() -> None:
    rng = np.random.default_rng(7)
    a, b = rng.normal(100, 5, 40), rng.normal(120, 5, 40)
    first, second = bootstrap_ratio(a, b), bootstrap_ratio(a, b)
    assert first == second
    assert first.low < first.ratio < first.high
    assert first.low < 1.2 < first.high
    assert first.ratio == pytest.approx(float(np.median(b) / np.median(a)))


def test_verdicts_are_honest() -> None:
    inside = RatioInterval(ratio=1.02, low=0.97, high=1.08)
    assert verdict(q=0.01, interval=inside, better="lower") == (False, "no significant difference")
    clear = RatioInterval(ratio=0.8, low=0.75, high=0.85)
    assert verdict(q=0.2, interval=clear, better="lower") == (False, "no significant difference")
    significant, words = verdict(q=0.001, interval=clear, better="lower")
    assert significant and "20.0% lower (better)" in words
    assert "(worse)" in verdict(q=0.001, interval=clear, better="higher")[1]
    nan = RatioInterval(ratio=math.nan, low=math.nan, high=math.nan)
    assert verdict(q=0.0, interval=nan, better="lower")[0] is False


@pytest.mark.parametrize(
    ("m", "n", "shift"), [(300, 200, 0.0), (2000, 1500, 0.05), (50, 4000, 0.3)]
)
def test_binned_u_test_is_the_u_test_of_the_bucket_midpoints(m: int, n: int, shift: float) -> None:
    rng = np.random.default_rng(m + n)
    ha = histogram.from_samples(rng.lognormal(1.0, 0.3, m))
    hb = histogram.from_samples(rng.lognormal(1.0 + shift, 0.3, n))
    ours = mann_whitney_u_binned(ha, hb)
    # Values in one bucket are ties: the unclamped midpoints.
    expanded_a = np.repeat(histogram.bucket_mid(ha.index), ha.counts)
    expanded_b = np.repeat(histogram.bucket_mid(hb.index), hb.counts)
    theirs = mannwhitneyu(expanded_a, expanded_b, method="asymptotic")
    assert ours.method == "asymptotic"
    assert ours.u == theirs.statistic
    assert ours.p == pytest.approx(theirs.pvalue, rel=1e-9)


def test_binned_u_test_finds_a_shift_in_large_histograms_and_none_without() -> None:
    rng = np.random.default_rng(11)
    base = histogram.from_samples(rng.lognormal(2.0, 0.2, 200_000))
    same = histogram.from_samples(rng.lognormal(2.0, 0.2, 150_000))
    slower = histogram.from_samples(rng.lognormal(2.02, 0.2, 150_000))
    assert mann_whitney_u_binned(base, same).p > 0.01
    assert mann_whitney_u_binned(base, slower).p < 1e-6


def test_bootstrap_of_histograms_is_seeded_and_covers_the_truth() -> None:
    rng = np.random.default_rng(12)
    a = histogram.from_samples(rng.lognormal(2.0, 0.2, 200_000))
    b = histogram.from_samples(rng.lognormal(2.0 + math.log(1.1), 0.2, 120_000))
    first = bootstrap_ratio(a, b)
    assert first == bootstrap_ratio(a, b)
    assert first.low < 1.1 < first.high and first.low > 1.0
    assert first.ratio == pytest.approx(b.median() / a.median())
    mean = bootstrap_ratio(a, b, statistic="mean")
    assert mean.ratio == b.mean / a.mean
    assert group_statistic(a, "mean") == a.sum / a.count


def test_a_small_histogram_is_bootstrapped_whole() -> None:
    """Raw samples binned for a pair with a histogram: no thinning below 1,000."""
    values = np.arange(1.0, 501.0)
    a = histogram.from_samples(values)
    assert bootstrap_ratio(a, a).ratio == 1.0
    assert bootstrap_ratio(a, a).low <= 1.0 <= bootstrap_ratio(a, a).high
