from types import SimpleNamespace
from typing import Any, cast

import pytest

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
