"""The histogram checks (xaclab_contracts.histogram) the agent and the server both make."""

from __future__ import annotations

from typing import Any

import pytest

from xaclab_contracts.histogram import HistogramError, bucket_index, check_histogram

# -2.0 twice, -0.0, 0.0 and 1.0: negative buckets mirror the positive ones, zero is bucket 0.
SIGNED: dict[str, Any] = {
    "scheme": "log2-128",
    "count": 5,
    "min": -2.0,
    "max": 1.0,
    "sum": -3.0,
    "sum_squares": 9.0,
    "buckets": [[-131073, 2], [0, 2], [130944, 1]],
}


def test_the_bucket_index_is_the_formats() -> None:
    values = (1.0, 2.0, 0.0, -0.0, -1.0, -2.0, 1.5, 5e-324)
    assert [bucket_index(x) for x in values] == [130944, 131072, 0, 0, -130945, -131073, 131008, 0]


def test_a_consistent_histogram_comes_back_as_lists() -> None:
    checked = check_histogram(SIGNED)
    assert (checked.count, checked.min, checked.max, checked.sum) == (5, -2.0, 1.0, -3.0)
    assert checked.index == [-131073, 0, 130944] and checked.counts == [2, 2, 1]
    floats = [[float(i), float(c)] for i, c in SIGNED["buckets"]]
    assert check_histogram({**SIGNED, "count": 5.0, "buckets": floats}) == checked


@pytest.mark.parametrize(
    ("changes", "where", "words"),
    [
        ({"buckets": [[0, 2], [-131073, 2], [130944, 1]]}, "buckets/1/0", "-131073 follows 0"),
        ({"buckets": [[-131073, 2], [-131073, 2], [130944, 1]]}, "buckets/1/0", "strictly"),
        ({"buckets": [[-131073, 3], [0, 2], [130944, 1]]}, "count", "add up to 6, not 5"),
        ({"buckets": [[-300000, 2], [0, 2], [130944, 1]]}, "buckets/0/0", "[-262016, 262015]"),
        ({"buckets": [[-131073, 2], [0, -2], [130944, 5]]}, "buckets/1/1", "count -2 is outside"),
        ({"buckets": [[-131073, 2], [0, 2.5], [130944, 1]]}, "buckets/1/1", "2.5 is not of type"),
        ({"buckets": [[-131073, 2], [False, 2], [130944, 1]]}, "buckets/1/0", "not of type"),
        ({"buckets": [[-131073], [0, 2]]}, "buckets/0", "not an [index, count] pair"),
        ({"min": -1.0}, "min", "min -1.0 is in bucket -130945, not in the first"),
        ({"max": 1.5}, "max", "max 1.5 is in bucket 131008, not in the last"),
        ({"min": 2.0, "max": 1.0}, "min", "greater than max"),
        ({"sum": -11.0}, "sum", "outside count × min … count × max"),
        ({"sum_squares": 21.0}, "sum_squares", "more than count × max(min², max²) (20.0)"),
        ({"count": "5"}, "count", "'5' is not of type 'integer'"),
    ],
)
def test_inconsistent_histograms_are_refused(
    changes: dict[str, Any], where: str, words: str
) -> None:
    with pytest.raises(HistogramError) as caught:
        check_histogram({**SIGNED, **changes})
    assert "/".join(caught.value.where) == where
    assert words in str(caught.value)
