"""Result validation (xaclab_contracts.results) against contracts/result-format.schema.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from records import histogram_line, result_line

from xaclab_contracts.files import RESULT_SCHEMA
from xaclab_contracts.results import (
    ResultFormatError,
    check_result,
    check_system,
    find_unstorable,
    load_validator,
)
from xaclab_contracts.suites import load_suite


def test_valid_results_pass() -> None:
    assert check_result(result_line()) is None
    checked = check_result(histogram_line())
    assert checked is not None and checked.count == 100_001 and checked.index == [130944, 131072]


@pytest.mark.parametrize(
    ("bad", "sentence"),
    [
        (
            result_line(samples=[]),
            "does not follow the result format at samples: [] should be non-empty",
        ),
        (result_line(unit="furlongs"), "at unit: 'furlongs' is not one of"),
        (result_line(extra=1), "at (top level): Additional properties are not allowed"),
        (result_line(sut="Berkeley DB"), "at sut: 'Berkeley DB' does not match"),
        (
            result_line(samples=[1.0, float("nan")]),
            "has a non-finite number or a NUL character at /samples/1",
        ),
        (
            result_line(params={"n": "a\x00b"}),
            "has a non-finite number or a NUL character at /params/n",
        ),
        ({**histogram_line(), "samples": [1.0]}, "carries both 'samples' and 'histogram'"),
        (
            {k: v for k, v in result_line().items() if k != "samples"},
            "'samples' is a required property",
        ),
        (
            histogram_line({"count": 100_002}),
            "at histogram/count: the bucket counts add up to 100001",
        ),
        (histogram_line({"sum": 10**400}), "at histogram/sum: an integer too large for a float64"),
        (
            histogram_line({"min": float("nan")}),
            "non-finite number or a NUL character at /histogram/min",
        ),
        (histogram_line({"min": 0.5}), "at histogram/min: min 0.5 is in bucket"),
    ],
)
def test_bad_results_are_refused_with_where_and_why(bad: dict[str, Any], sentence: str) -> None:
    with pytest.raises(ResultFormatError) as caught:
        check_result(bad)
    assert sentence in caught.value.sentence()


def test_any_plain_system_name_is_a_valid_result_and_suites_say_which() -> None:
    check_result(result_line(sut="rocksdb"))
    check_system(result_line(sut="os"), load_suite("page-touch"))
    with pytest.raises(ResultFormatError, match="'bdb' is not one that suite 'page-touch'"):
        check_system(result_line(sut="bdb"), load_suite("page-touch"))


def test_find_unstorable_names_the_first_path() -> None:
    assert find_unstorable({"a": [1.0, {"b": float("inf")}]}) == "/a/1/b"
    assert find_unstorable({"a\x00": 1}) == "/'a\\x00'"
    assert find_unstorable({"a": "ok", "b": [1, 2.5]}) is None


def test_a_schema_the_fast_path_cannot_check_is_refused(tmp_path: Path) -> None:
    schema = json.loads(RESULT_SCHEMA.read_text())
    schema["properties"]["samples"]["uniqueItems"] = True
    (tmp_path / "s.json").write_text(json.dumps(schema))
    with pytest.raises(ValueError, match="fast path"):
        load_validator(tmp_path / "s.json")
    schema = json.loads(RESULT_SCHEMA.read_text())
    schema["properties"]["histogram"]["properties"]["buckets"]["maxItems"] = 10
    (tmp_path / "h.json").write_text(json.dumps(schema))
    with pytest.raises(ValueError, match="histogram's bounds"):
        load_validator(tmp_path / "h.json")
