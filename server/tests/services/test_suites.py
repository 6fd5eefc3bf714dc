import dataclasses
from pathlib import Path
from typing import Any

import pytest
from xaclab_contracts.suites import BestOf

from xaclab_server.services.suites import (
    ParamDecl,
    ParamError,
    Suite,
    SuiteError,
    check_param,
    check_run_request,
    coerce_form_value,
    load_suites,
    parse_suite,
    profile_rule,
)


@pytest.fixture(scope="module")
def suites() -> dict[str, Suite]:
    return load_suites()


def test_the_repository_suites_load(suites: dict[str, Suite]) -> None:
    page_touch = suites["page-touch"]
    assert tuple(page_touch.profiles) == ("quick", "full", "watch", "precise")
    # "precise" repeats the quick profile until every median is known within ±2%.
    assert page_touch.profiles["precise"] == ("--quick",)
    assert page_touch.repeat["precise"].median_ci_percent == 2
    # "watch" keeps each result's best of three quick runs, for the change detector.
    assert page_touch.profiles["watch"] == ("--quick",)
    assert page_touch.best_of["watch"].runs == 3
    assert page_touch.params["max_pages"].max == 1024


def test_a_valid_request_passes(suites: dict[str, Suite]) -> None:
    found = check_run_request(
        suites=suites,
        suite="page-touch",
        profile="quick",
        params={"repetitions": 5, "max_pages": 1024},
    )
    assert found.name == "page-touch"


@pytest.mark.parametrize(
    ("suite", "profile", "params", "words"),
    [
        ("nope", "quick", {}, "Unknown suite 'nope'"),
        ("page-touch", "slow", {}, "no profile 'slow'"),
        ("page-touch", "quick", {"colour": 1}, "does not declare a parameter 'colour'"),
        ("page-touch", "quick", {"max_pages": 2048}, "above its maximum 1024"),
        ("page-touch", "quick", {"repetitions": 0}, "below its minimum 1"),
        ("page-touch", "quick", {"repetitions": "5"}, "must be an integer"),
        ("page-touch", "quick", {"repetitions": 5.5}, "must be an integer"),
        ("page-touch", "quick", {"repetitions": True}, "must be an integer"),
    ],
)
def test_refusals_name_the_problem(
    suites: dict[str, Suite], suite: str, profile: str, params: dict[str, Any], words: str
) -> None:
    with pytest.raises(ParamError, match=words):
        check_run_request(suites=suites, suite=suite, profile=profile, params=params)


def test_number_boolean_and_enum_types() -> None:
    number = ParamDecl(name="ratio", type="number", flag="--r", help="", min=0, max=1)
    check_param(number, 0.5)
    check_param(number, 1)
    for bad in (float("nan"), True, "0.5", 1.5):
        with pytest.raises(ParamError):
            check_param(number, bad)
    boolean = ParamDecl(name="advisory", type="boolean", flag="--a", help="")
    check_param(boolean, False)
    with pytest.raises(ParamError, match="true or false"):
        check_param(boolean, 1)
    enum = ParamDecl(name="mode", type="enum", flag="--m", help="", choices=("a", "b"))
    check_param(enum, "a")
    with pytest.raises(ParamError, match="one of a, b"):
        check_param(enum, "c")


def test_form_values_are_coerced_by_type() -> None:
    integer = ParamDecl(name="reps", type="integer", flag="--reps", help="")
    assert coerce_form_value(integer, " 12 ") == 12
    with pytest.raises(ParamError, match="must be an integer"):
        coerce_form_value(integer, "1.5")
    boolean = ParamDecl(name="advisory", type="boolean", flag="--a", help="")
    assert coerce_form_value(boolean, "true") is True


def test_malformed_declarations_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="equal the file name"):
        parse_suite({"name": "other", "profiles": {"quick": []}}, source=tmp_path / "x.json")
    with pytest.raises(SuiteError, match="at params/p"):
        parse_suite(
            {
                "name": "x",
                "programs": ["x"],
                "profiles": {"quick": []},
                "params": {"p": {"type": "float"}},
            },
            source=tmp_path / "x.json",
        )
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    with pytest.raises(SuiteError, match="broken.json"):
        load_suites(tmp_path)


def test_concurrency_params_name_their_programs(suites: dict[str, Suite]) -> None:
    concurrency = suites["concurrency"]
    assert concurrency.programs == ("concurrency_test", "concurrency_records")
    assert concurrency.params["procs"].programs == ()
    assert concurrency.params["durability"].programs == ()
    assert concurrency.params["txns"].programs == ("concurrency_test",)
    assert concurrency.params["nrec"].programs == ("concurrency_records",)
    check_run_request(
        suites=suites,
        suite="concurrency",
        profile="quick",
        params={"procs": 4, "txns": 100, "nrec": 50, "variant": "fine", "repetitions": 2},
    )


P = {"type": "integer", "flag": "--p"}


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"programs": "a"}, "'programs' must be a non-empty list of program names"),
        ({"programs": []}, "'programs' must be a non-empty list of program names"),
        ({"params": {"p": {**P, "programs": ["c"]}}}, "programs of the suite"),
        ({"params": {"p": {**P, "programs": []}}}, "non-empty list"),
        ({"params": {"p": {**P, "programs": ["a", "a"]}}}, "distinct"),
        ({"params": {"p": {**P, "programs": "a"}}}, "non-empty list"),
        ({"params": {"p": {**P, "programs": [["a"]]}}}, "programs of the suite"),
    ],
)
def test_bad_program_lists_are_refused(change: dict[str, Any], words: str, tmp_path: Path) -> None:
    declaration = {"name": "x", "programs": ["a", "b"], "profiles": {"quick": []}, **change}
    with pytest.raises(SuiteError, match=words):
        parse_suite(declaration, source=tmp_path / "x.json")


def test_the_forms_say_how_far_apart_a_best_of_rule_spaces_its_runs(
    suites: dict[str, Suite],
) -> None:
    page_touch = suites["page-touch"]
    back_to_back = dataclasses.replace(page_touch, best_of={"watch": BestOf(3)})
    spaced = dataclasses.replace(page_touch, best_of={"watch": BestOf(3, gap_s=15)})
    assert profile_rule(back_to_back, "watch").startswith("watch: each result the best of 3 runs (")
    assert profile_rule(spaced, "watch").startswith(
        "watch: each result the best of 3 runs, 15 s apart ("
    )
    assert profile_rule(spaced, "quick") == "", "a profile without a rule runs once"
