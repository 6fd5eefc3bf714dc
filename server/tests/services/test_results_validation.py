import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest
from jsonschema.exceptions import best_match

from tests.helpers import page_touch_results, result_record
from xaclab_server.core.paths import PACKAGE_DIR
from xaclab_server.models import Job
from xaclab_server.services.results import ResultError, check_results, load_validator

VALIDATOR = load_validator(PACKAGE_DIR / "result-format.schema.json")
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
    assert arrays[0].dtype == np.float64
    assert arrays[0].tolist() == [1.0, 2.5, -3.0]


def test_a_schema_with_other_sample_rules_is_refused(tmp_path: Path) -> None:
    schema = json.loads((PACKAGE_DIR / "result-format.schema.json").read_text())
    schema["properties"]["samples"]["uniqueItems"] = True
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    with pytest.raises(ValueError, match="fast path"):
        load_validator(path)
