"""The log2-128 histogram: buckets, exact sums, merging, quantile bound, stored form, checks."""

import math
import struct
import sys
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xaclab_server.services import histogram as hist
from xaclab_server.services.histogram import Histogram, HistogramError
from xaclab_server.services.statistics import summarize, summarize_histogram

PROPERTY = settings(derandomize=True, deadline=None, max_examples=200)
finite = st.floats(allow_nan=False, allow_infinity=False)
# Normal magnitudes (the relative bound holds there), either sign.
normal = st.floats(min_value=2.0**-1000, max_value=2.0**1000) | st.floats(
    min_value=-(2.0**1000), max_value=-(2.0**-1000)
)
sample_lists = st.lists(finite.filter(lambda x: abs(x) < 1e150), min_size=1, max_size=300)


def as_bits(x: float) -> int:
    value: int = struct.unpack("<Q", struct.pack("<d", x))[0]
    return value


def one(index: int, fn: Any) -> float:
    return float(fn(np.array([index]))[0])


def test_known_buckets_match_the_c_writer() -> None:
    """The same indices as libxac/tests/test_11_histogram.c."""
    x = [1.0, 2.0, math.nextafter(1.0, 0.0), 1 + 1 / 128, 0.0, -0.0, -1.0]
    assert hist.bucket_index(x).tolist() == [130944, 131072, 130943, 130945, 0, 0, -130945]
    assert hist.bucket_index([sys.float_info.max, -sys.float_info.max]).tolist() == [
        hist.INDEX_MAX,
        hist.INDEX_MIN,
    ]
    assert one(130945, hist.bucket_low) == 1 + 1 / 128
    assert one(130945, hist.bucket_high) == 1 + 2 / 128
    assert one(-130945, hist.bucket_high) == -1.0
    assert math.isinf(one(hist.INDEX_MAX, hist.bucket_high))
    assert hist.bucket_index([sys.float_info.min]).tolist() == [128]


@PROPERTY
@given(finite)
def test_every_double_lies_in_its_bucket(x: float) -> None:
    index = int(hist.bucket_index([x])[0])
    assert hist.INDEX_MIN <= index <= hist.INDEX_MAX
    assert index == (as_bits(abs(x)) >> 45 if x >= 0 else -1 - (as_bits(abs(x)) >> 45))
    low, high = one(index, hist.bucket_low), one(index, hist.bucket_high)
    assert (low <= x < high) if index >= 0 else (low < x <= high)


@PROPERTY
@given(normal)
def test_a_midpoint_is_within_the_bound_of_each_value_in_its_bucket(x: float) -> None:
    mid = one(int(hist.bucket_index([x])[0]), hist.bucket_mid)
    assert abs(mid - x) <= hist.BOUND * abs(x)


@PROPERTY
@given(finite, finite)
def test_index_never_decreases(x: float, y: float) -> None:
    low, high = sorted((x, y))
    assert hist.bucket_index([low])[0] <= hist.bucket_index([high])[0]


@PROPERTY
@given(sample_lists)
def test_count_min_max_and_sums_are_exact(values: list[float]) -> None:
    h = hist.from_samples(values)
    assert h.count == len(values) == int(h.counts.sum())
    assert (h.min, h.max) == (min(values), max(values))
    assert h.sum == math.fsum(values)
    assert h.sum_squares == float(sum((Fraction(v) ** 2 for v in values), Fraction(0)))
    assert bool((np.diff(h.index) > 0).all()) and bool((h.counts >= 1).all())


def test_sum_squares_keeps_what_rounding_drops() -> None:
    # (2^27 + 1)^2 = 2^54 + 2^28 + 1: the 1 is rounded away, three more 1s bring it back.
    assert hist.exact_sum_squares(np.array([134217729.0, 1.0, 1.0, 1.0])) == 2.0**54 + 2**28 + 4
    # Outside Dekker's range: exact rational arithmetic.
    assert hist.exact_sum_squares(np.array([1e-300, 3.0])) == 9.0
    assert hist.exact_sum_squares(np.array([1e200])) == math.inf


@PROPERTY
@given(sample_lists, st.integers(0, 300), st.integers(0, 300))
def test_merging_parts_gives_the_whole(values: list[float], i: int, j: int) -> None:
    cut1, cut2 = sorted((i % (len(values) + 1), j % (len(values) + 1)))
    parts = [values[:cut1], values[cut1:cut2], values[cut2:]]
    hists = [hist.from_samples(p) for p in parts if p]
    merged, whole = hist.merge(hists), hist.from_samples(values)
    assert merged.count == whole.count and (merged.min, merged.max) == (whole.min, whole.max)
    assert np.array_equal(merged.index, whole.index)
    assert np.array_equal(merged.counts, whole.counts)
    assert merged.sum == math.fsum(h.sum for h in hists)


@PROPERTY
@given(sample_lists, sample_lists, sample_lists)
def test_merge_is_associative_and_order_free(
    a: list[float], b: list[float], c: list[float]
) -> None:
    ha, hb, hc = (hist.from_samples(v) for v in (a, b, c))
    left = hist.merge([hist.merge([ha, hb]), hc])
    right = hist.merge([ha, hist.merge([hb, hc])])
    assert (left.count, left.min, left.max) == (right.count, right.min, right.max)
    assert np.array_equal(left.index, right.index) and np.array_equal(left.counts, right.counts)
    # Sums of rounded sums: equal up to one rounding of the parts' magnitude.
    scale = abs(ha.sum) + abs(hb.sum) + abs(hc.sum)
    assert abs(left.sum - right.sum) <= 4 * sys.float_info.epsilon * scale
    # All at once, the result does not depend on the order at all.
    assert hist.merge([ha, hb, hc]).same_as(hist.merge([hc, ha, hb]))


@PROPERTY
@given(st.lists(normal.filter(lambda x: x > 0), min_size=1, max_size=400))
def test_every_rank_is_within_the_bound(values: list[float]) -> None:
    h = hist.from_samples(values)
    ordered = sorted(values)
    for rank in range(1, len(values) + 1):
        truth = ordered[rank - 1]
        assert abs(h.value_at_rank(rank) - truth) <= hist.BOUND * truth
    assert h.value_at_rank(1) == ordered[0] and h.value_at_rank(len(values)) == ordered[-1]


def test_rank_outside_the_count_is_refused() -> None:
    with pytest.raises(ValueError):
        hist.from_samples([1.0, 2.0]).value_at_rank(3)


def latencies(n: int, seed: int = 3) -> np.ndarray[Any, np.dtype[np.float64]]:
    rng = np.random.default_rng(seed)
    values: np.ndarray[Any, np.dtype[np.float64]] = rng.lognormal(mean=1.5, sigma=0.4, size=n)
    return values


def test_summary_from_a_histogram_against_the_raw_samples() -> None:
    values = latencies(150_000)
    raw, binned = summarize(values), summarize_histogram(hist.from_samples(values))
    assert (binned.n, binned.min, binned.max) == (raw.n, raw.min, raw.max)
    assert binned.mean == raw.mean  # exact, not approximately
    for name in ("median", "p99"):
        got, want = getattr(binned, name), getattr(raw, name)
        assert abs(got - want) <= hist.BOUND * want, name
    assert raw.stddev is not None and binned.stddev is not None
    assert binned.stddev == pytest.approx(raw.stddev, rel=1e-9)


def test_stddev_of_equal_values_is_zero_not_nan() -> None:
    h = hist.from_samples([0.1] * 100_001)
    assert summarize_histogram(h).stddev == 0.0


def test_even_count_median_is_the_mean_of_the_two_middle_ranks() -> None:
    h = hist.from_samples([1.0, 2.0, 4.0, 8.0])
    assert h.median() == (h.value_at_rank(2) + h.value_at_rank(3)) / 2


def test_stored_form_round_trips() -> None:
    h = hist.from_samples(np.r_[latencies(1000), -latencies(10)])
    packed = hist.pack(h)
    assert len(packed) == 52 + 12 * len(h.index)
    assert hist.unpack(packed).same_as(h)
    for bad in (packed[:-1], b"x" * 10, b"log2-129" + packed[8:]):
        with pytest.raises(ValueError):
            hist.unpack(bad)


def wire(h: Histogram, **changes: Any) -> dict[str, Any]:
    raw = h.to_json()
    raw.update(changes)
    return raw


SMALL = hist.from_samples([1.0, 1.5, 3.0, 3.0])  # buckets 130944, 131008, 131136


def test_parse_gives_back_the_histogram() -> None:
    assert hist.parse(wire(SMALL)).same_as(SMALL)
    as_floats = wire(
        SMALL, count=4.0, buckets=[[float(i), float(c)] for i, c in SMALL.to_json()["buckets"]]
    )
    assert hist.parse(as_floats).same_as(SMALL)


@pytest.mark.parametrize(
    ("changes", "where", "words"),
    [
        ({"buckets": [[131136, 2], [131008, 1], [130944, 1]]}, ("buckets", "1", "0"), "increase"),
        ({"buckets": [[130944, 1], [130944, 1], [131136, 2]]}, ("buckets", "1", "0"), "increase"),
        ({"buckets": [[130944, 2], [131008, 1], [131136, 2]]}, ("count",), "add up to 5, not 4"),
        ({"buckets": [[130944, 2], [131008, -1], [131136, 3]]}, ("buckets", "1", "1"), "-1"),
        ({"buckets": [[130944, 1], [131008, 0], [131136, 3]]}, ("buckets", "1", "1"), "outside"),
        ({"buckets": [[130944, 1], [300000, 1], [131136, 2]]}, ("buckets", "1", "0"), "300000"),
        ({"buckets": [[130944, 1], [131008, 10**30], [131136, 2]]}, ("buckets", "1", "1"), "10000"),
        ({"buckets": [[130944, 1, 5]]}, ("buckets", "0"), "pair"),
        ({"buckets": [[130944, True]]}, ("buckets", "0", "1"), "integer"),
        ({"buckets": [[130944, 1.5]]}, ("buckets", "0", "1"), "integer"),
        ({"buckets": []}, ("buckets",), "non-empty"),
        ({"buckets": [[i, 1] for i in range(65537)]}, ("buckets",), "too long"),
        ({"min": 4.0, "max": 3.0}, ("min",), "greater than max"),
        ({"min": 0.5}, ("min",), "first bucket"),
        ({"max": 3.5}, ("max",), "last bucket"),
        ({"sum": 100.0}, ("sum",), "outside"),
        ({"sum": 1.0}, ("sum",), "outside"),
        ({"sum_squares": 1e6}, ("sum_squares",), "more than"),
        ({"count": 4.5}, ("count",), "integer"),
    ],
)
def test_malformed_histograms_are_refused(
    changes: dict[str, Any], where: tuple[str, ...], words: str
) -> None:
    with pytest.raises(HistogramError) as caught:
        hist.parse(wire(SMALL, **changes))
    assert caught.value.where == where
    assert words in str(caught.value)
