import math
import statistics as py_statistics

import pytest

from xaclab_server.services.statistics import (
    nearest_rank,
    pack_samples,
    summarize,
    unpack_samples,
)


def test_summary_of_known_samples() -> None:
    summary = summarize([4.0, 1.0, 3.0, 2.0])
    assert summary.n == 4
    assert summary.mean == 2.5
    assert summary.median == 2.5
    assert (summary.min, summary.max) == (1.0, 4.0)
    assert summary.stddev == pytest.approx(py_statistics.stdev([1.0, 2.0, 3.0, 4.0]))
    assert summary.p99 == 4.0


def test_odd_count_median_is_the_middle_value() -> None:
    assert summarize([9.0, 1.0, 5.0]).median == 5.0


def test_single_sample_has_no_stddev() -> None:
    summary = summarize([7.5])
    assert (summary.n, summary.mean, summary.median, summary.p99) == (1, 7.5, 7.5, 7.5)
    assert summary.stddev is None


def test_stddev_uses_n_minus_one() -> None:
    assert summarize([1.0, 3.0]).stddev == pytest.approx(math.sqrt(2.0))


@pytest.mark.parametrize(
    ("n", "rank"),
    [(1, 1), (2, 2), (99, 99), (100, 99), (101, 100), (200, 198), (1000, 990)],
)
def test_p99_is_nearest_rank(n: int, rank: int) -> None:
    ordered = [float(i) for i in range(1, n + 1)]
    assert nearest_rank(ordered, 99) == float(rank)
    assert summarize(list(reversed(ordered))).p99 == float(rank)


def test_mean_is_exactly_rounded() -> None:
    assert summarize([1e16, 1.0, -1e16]).mean == pytest.approx(1 / 3)


@pytest.mark.parametrize("bad", [[], [float("nan")], [1.0, float("inf")]])
def test_refuses_empty_and_non_finite(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        summarize(bad)


def test_percent_out_of_range() -> None:
    with pytest.raises(ValueError):
        nearest_rank([1.0], 0)


def test_pack_is_little_endian_float64() -> None:
    packed = pack_samples([1.0, -2.5])
    assert packed == bytes.fromhex("000000000000f03f") + bytes.fromhex("00000000000004c0")
    assert unpack_samples(packed) == [1.0, -2.5]
    with pytest.raises(ValueError):
        unpack_samples(b"\x00" * 7)
