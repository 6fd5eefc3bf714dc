from __future__ import annotations

import json
from typing import Any

import pytest
from xaclab_contracts.histogram import bucket_index

from xaclab_agent.errors import ResultError
from xaclab_agent.results import chunk_results, parse_result_line, with_env


def test_valid_line(valid_result: dict[str, Any]) -> None:
    assert parse_result_line(json.dumps(valid_result).encode() + b"\n") == valid_result


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda r: r.update(format_version=2), "format_version"),
        (lambda r: r.update(samples=[]), "samples"),
        (lambda r: r.update(extra=1), "top level"),
        (lambda r: r.update(env={"x": 1}), "must not set 'env'"),
        (lambda r: r.pop("metric"), "metric"),
    ],
)
def test_invalid_results(valid_result: dict[str, Any], mutate: Any, reason: str) -> None:
    mutate(valid_result)
    with pytest.raises(ResultError, match=reason):
        parse_result_line(json.dumps(valid_result))


@pytest.mark.parametrize("line", ["not json", "[1, 2]", "{", '"text"'])
def test_not_a_json_object(line: str) -> None:
    with pytest.raises(ResultError):
        parse_result_line(line)


def test_env_is_added_without_touching_the_original(valid_result: dict[str, Any]) -> None:
    added = with_env(valid_result, {"hostname": "h"})
    assert added["env"] == {"hostname": "h"} and "env" not in valid_result


def test_chunks_respect_the_count_limit(valid_result: dict[str, Any]) -> None:
    chunks = chunk_results([valid_result] * 2500)
    assert [len(c) for c in chunks] == [1000, 1000, 500]
    assert chunk_results([]) == []


def _histogram_result(valid_result: dict[str, Any]) -> dict[str, Any]:
    """100,001 samples: 1.0 (bucket 130944) once and 2.0 (bucket 131072) the other times."""
    result = {k: v for k, v in valid_result.items() if k != "samples"}
    result["histogram"] = {
        "scheme": "log2-128",
        "count": 100_001,
        "min": 1.0,
        "max": 2.0,
        "sum": 200_001.0,
        "sum_squares": 400_001.0,
        "buckets": [[130944, 1], [131072, 100_000]],
    }
    return result


def test_a_histogram_result_passes_through_unchanged(valid_result: dict[str, Any]) -> None:
    result = _histogram_result(valid_result)
    assert parse_result_line(json.dumps(result)) == result


def test_bucket_index_is_the_formats() -> None:
    assert [bucket_index(x) for x in (1.0, 2.0, 0.0, -0.0, -1.0)] == [
        130944,
        131072,
        0,
        0,
        -130945,
    ]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"count": 100_000, "buckets": [[130944, 100_000]]}, "histogram/count"),
        ({"buckets": [[131072, 100_000], [130944, 1]]}, "buckets/1/0: bucket indices must"),
        ({"buckets": [[130944, 1], [130944, 100_000]]}, "must increase strictly"),
        ({"count": 100_002}, "add up to 100001, not 100002"),
        ({"buckets": [[130944, -1], [131072, 100_002]]}, "histogram/buckets/0/1"),
        ({"buckets": [[130944, 1], [300_000, 100_000]]}, "histogram/buckets/1/0"),
        ({"min": 3.0}, "greater than max"),
        ({"min": 0.5}, "not in the first bucket"),
        ({"sum": 1.0}, "histogram/sum"),
        ({"sum_squares": 1e9}, "sum_squares"),
        ({"sum": float("nan")}, "non-finite number or a NUL character at /histogram/sum"),
        ({"max": 10**400}, "histogram/max: an integer too large for a float64"),
        ({"scheme": "log10"}, "histogram/scheme"),
        ({"buckets": [[130944, 1, 1]]}, "histogram/buckets/0"),
    ],
)
def test_malformed_histograms_are_refused(
    valid_result: dict[str, Any], change: dict[str, Any], reason: str
) -> None:
    result = _histogram_result(valid_result)
    result["histogram"].update(change)
    with pytest.raises(ResultError, match=reason):
        parse_result_line(json.dumps(result))


def test_samples_and_histogram_together_or_neither_are_refused(
    valid_result: dict[str, Any],
) -> None:
    both = {**_histogram_result(valid_result), "samples": [1.0]}
    neither = {k: v for k, v in valid_result.items() if k != "samples"}
    for result in (both, neither):
        with pytest.raises(ResultError, match="'samples' (and 'histogram'|is a required)"):
            parse_result_line(json.dumps(result))
