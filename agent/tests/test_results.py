from __future__ import annotations

import json
from typing import Any

import pytest

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
