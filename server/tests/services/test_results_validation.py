import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest
from jsonschema.exceptions import best_match
from xaclab_contracts.files import RESULT_SCHEMA
from xaclab_contracts.suites import load_suites

from tests.helpers import histogram_record, page_touch_results, result_record
from xaclab_server.models import Job
from xaclab_server.services.histogram import Histogram, from_samples
from xaclab_server.services.results import ResultError, check_results, load_validator

VALIDATOR = load_validator(RESULT_SCHEMA)
JOB = cast(Job, SimpleNamespace(id=7, suite="page-touch"))


def test_generated_results_are_valid() -> None:
    check_results(validator=VALIDATOR, results=list(page_touch_results()), job=JOB)


@pytest.mark.parametrize(
    ("result", "words"),
    [
        (result_record(samples=[]), "samples"),
        (result_record(format_version=2), "format_version"),
        (result_record(extra=1), "Additional properties"),
        (result_record(unit="furlongs"), "unit"),
        (result_record(samples=[1.0, float("nan")]), "non-finite"),
        (result_record(samples=[1.0, float("-inf")]), "at /samples/1"),
        (result_record(samples=[1.0, True]), "samples/1: True is not of type 'number'"),
        (result_record(samples=[1, "2"]), "samples/1: '2' is not of type 'number'"),
        (result_record(samples=[1, None]), "not of type 'number'"),
        (result_record(samples=[10**400]), "too large for a float64"),
        (result_record(samples="1.0"), "samples: '1.0' is not of type 'array'"),
        (result_record(samples=[1.0] * 1_000_001), "is too long"),
        (result_record(params={"n": float("inf")}), "non-finite"),
        (result_record(params={"Bad Key": 1}), "params"),
        (result_record(started_at="yesterday"), "date-time"),
        (result_record(suite="storage"), "job 7 runs suite 'page-touch'"),
        ("not an object", "object"),
    ],
)
def test_bad_results_are_refused_with_their_index(result: Any, words: str) -> None:
    with pytest.raises(ResultError, match="Result 1") as caught:
        check_results(validator=VALIDATOR, results=[result_record(), result], job=JOB)
    assert words in str(caught.value)


def test_empty_upload_is_refused() -> None:
    with pytest.raises(ResultError, match="at least one"):
        check_results(validator=VALIDATOR, results=[], job=JOB)


@pytest.mark.parametrize(
    "samples", [[], [1.0, True], [False], [1, "2"], [[1.0]], [{"a": 1}], "x", None]
)
def test_fast_sample_checks_word_errors_as_the_full_schema_does(samples: Any) -> None:
    """The light schema plus check_samples says what the one schema file says."""
    record = result_record(samples=samples)
    full = best_match(VALIDATOR.full.iter_errors(record))
    assert full is not None
    with pytest.raises(ResultError) as caught:
        check_results(validator=VALIDATOR, results=[record], job=JOB)
    where = "/".join(str(p) for p in full.absolute_path)
    assert str(caught.value) == (
        f"Result 0 does not follow the result format at {where}: {full.message}."
    )


def test_samples_come_back_as_float64_arrays() -> None:
    arrays = check_results(
        validator=VALIDATOR, results=[result_record(samples=[1, 2.5, -3])], job=JOB
    )
    assert isinstance(arrays[0], np.ndarray)
    assert arrays[0].dtype == np.float64
    assert arrays[0].tolist() == [1.0, 2.5, -3.0]


def test_a_schema_with_other_sample_rules_is_refused(tmp_path: Path) -> None:
    schema = json.loads(RESULT_SCHEMA.read_text())
    schema["properties"]["samples"]["uniqueItems"] = True
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    with pytest.raises(ValueError, match="fast path"):
        load_validator(path)


HIST_VALUES = np.linspace(1.0, 50.0, 100_001)


def test_a_histogram_result_comes_back_checked() -> None:
    measured = check_results(
        validator=VALIDATOR, results=[result_record(), histogram_record(HIST_VALUES)], job=JOB
    )
    assert isinstance(measured[0], np.ndarray)
    got = measured[1]
    assert isinstance(got, Histogram)
    assert got.same_as(from_samples(HIST_VALUES))


def _with_histogram(**changes: Any) -> dict[str, Any]:
    record = histogram_record(HIST_VALUES)
    record["histogram"].update(changes)
    return record


@pytest.mark.parametrize(
    ("result", "words"),
    [
        (
            _with_histogram(count=100_000, buckets=[[130944, 100_000]]),
            "at histogram/count: 100000 is less than the minimum of 100001",
        ),
        (_with_histogram(scheme="log10-100"), "at histogram/scheme"),
        (_with_histogram(extra=1), "at histogram: Additional properties"),
        (
            _with_histogram(min=float("nan")),
            "non-finite number or a NUL character at /histogram/min",
        ),
        (_with_histogram(sum_squares=-1.0), "at histogram/sum_squares"),
        (_with_histogram(sum=10**400), "at histogram/sum: an integer too large"),
        (_with_histogram(count=100_002), "at histogram/count: the bucket counts add up to 100001"),
        (_with_histogram(min=60.0), "at histogram/min: min 60.0 is greater than max 50.0"),
        (
            _with_histogram(buckets=[[131000, 100_001], [130000, 0]]),
            "at histogram/buckets/1/1: bucket count 0 is outside",
        ),
        (
            _with_histogram(buckets=[[131000, 50_001], [130000, 50_000]]),
            "at histogram/buckets/1/0: bucket indices must increase strictly",
        ),
        (_with_histogram(buckets=[[130944, -5]]), "at histogram/buckets/0/1: bucket count -5"),
        (_with_histogram(buckets=[[i, 1] for i in range(65537)]), "too long (at most 65536)"),
        (
            {**histogram_record(HIST_VALUES), "samples": [1.0]},
            "carries both 'samples' and 'histogram'",
        ),
        (
            {k: v for k, v in result_record().items() if k != "samples"},
            "'samples' is a required property (or, above 100,000 samples, 'histogram')",
        ),
        (
            histogram_record(HIST_VALUES, params={"n": "a\x00b"}),
            "non-finite number or a NUL character at /params/n",
        ),
    ],
)
def test_bad_histograms_are_refused_with_where_and_why(result: Any, words: str) -> None:
    with pytest.raises(ResultError, match="Result 1") as caught:
        check_results(validator=VALIDATOR, results=[result_record(), result], job=JOB)
    assert words in str(caught.value)
    assert len(str(caught.value)) < 400, "a sentence, not a dump of the result"


def test_a_schema_with_other_histogram_bounds_is_refused(tmp_path: Path) -> None:
    schema = json.loads(RESULT_SCHEMA.read_text())
    schema["properties"]["histogram"]["properties"]["buckets"]["maxItems"] = 10**6
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    with pytest.raises(ValueError, match="histogram's bounds"):
        load_validator(path)


def test_a_system_its_suite_does_not_declare_is_refused() -> None:
    """page_touch measures libxac and os (contracts/suites/page-touch.json), not bdb."""
    with_suites = load_validator(RESULT_SCHEMA, suites=load_suites())
    check_results(validator=with_suites, results=list(page_touch_results()), job=JOB)
    foreign = result_record(sut="bdb")
    with pytest.raises(ResultError, match="Result 1") as caught:
        check_results(validator=with_suites, results=[result_record(), foreign], job=JOB)
    assert "at sut: system 'bdb' is not one that suite 'page-touch' declares (libxac, os)" in (
        str(caught.value)
    )
    # The result schema itself names no systems: a new one is a line in a suite file.
    check_results(validator=VALIDATOR, results=[foreign], job=JOB)
