from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from xaclab_contracts.suites import list_suites, load_suite, parse_suite

from xaclab_agent.errors import ParamError, SuiteError

HOSTILE = ["; rm -rf /", "$(id)", "`id`", "../../etc/passwd", "read && id", "read|id", "-rf", ""]


@pytest.fixture
def suites_dir(lab: Any) -> Path:
    return Path(lab.suites_dir)


def test_real_page_touch_suite_loads() -> None:
    suite = load_suite("page-touch")
    assert suite.programs == ("page_touch",)
    assert "page-touch" in list_suites()
    argv = suite.argv("page_touch", "quick", {"repetitions": 5}, Path("/opt/bin"))
    assert argv == ["/opt/bin/page_touch", "--quick", "--reps", "5"]


@pytest.mark.parametrize("name", ["../fake", "..", "fake/../fake", "/etc/passwd", "Fake", "", 7])
def test_suite_names_are_checked_before_any_path(name: Any, suites_dir: Path) -> None:
    with pytest.raises(SuiteError):
        load_suite(name, suites_dir)


def test_unknown_suite(suites_dir: Path) -> None:
    with pytest.raises(SuiteError, match="unknown suite 'nope'"):
        load_suite("nope", suites_dir)


def test_argv_all_types(suites_dir: Path) -> None:
    suite = load_suite("fake", suites_dir)
    params = {"access": "write", "advisory": True, "ratio": 0.5, "repetitions": 3}
    suite.validate(params)
    argv = suite.argv("fake_bench", "quick", params, Path("/b"))
    # declaration order, not the job's order
    assert argv == [
        "/b/fake_bench",
        "--quick",
        "--reps",
        "3",
        "--ratio",
        "0.5",
        "--advisory",
        "--access",
        "write",
    ]


def test_false_boolean_and_absent_params_pass_nothing(suites_dir: Path) -> None:
    suite = load_suite("fake", suites_dir)
    assert suite.argv("fake_bench", "full", {"advisory": False}, Path("/b")) == ["/b/fake_bench"]


def test_unknown_profile(suites_dir: Path) -> None:
    suite = load_suite("fake", suites_dir)
    with pytest.raises(SuiteError, match="no profile"):
        suite.argv("fake_bench", "; id", {}, Path("/b"))


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"repetitions": 0}, "outside"),
        ({"repetitions": 101}, "outside"),
        ({"repetitions": -1}, "outside"),
        ({"repetitions": 10**30}, "outside"),
        ({"repetitions": "5"}, "integer"),
        ({"repetitions": 5.0}, "integer"),
        ({"repetitions": True}, "integer"),
        ({"ratio": 1.5}, "outside"),
        ({"ratio": float("nan")}, "finite"),
        ({"ratio": "0.5"}, "number"),
        ({"advisory": "true"}, "true or false"),
        ({"advisory": 1}, "true or false"),
        ({"access": "append"}, "one of"),
        ({"access": 1}, "one of"),
        ({"; rm -rf /": 1}, "does not declare"),
        ({"dir": "/tmp"}, "does not declare"),
    ],
)
def test_invalid_params_are_refused(params: dict[str, Any], reason: str, suites_dir: Path) -> None:
    with pytest.raises(ParamError, match=reason):
        load_suite("fake", suites_dir).validate(params)


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_enum_strings_are_refused(value: str, suites_dir: Path) -> None:
    with pytest.raises(ParamError):
        load_suite("fake", suites_dir).validate({"access": value})


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_strings_refused_for_every_type(value: str, suites_dir: Path) -> None:
    suite = load_suite("fake", suites_dir)
    for name in suite.params:
        with pytest.raises(ParamError):
            suite.validate({name: value})


def test_params_must_be_an_object(suites_dir: Path) -> None:
    with pytest.raises(ParamError, match="JSON object"):
        load_suite("fake", suites_dir).validate(["--reps", "5"])


def test_cli_params_are_typed(suites_dir: Path) -> None:
    suite = load_suite("fake", suites_dir)
    parsed = suite.parse_cli_params(["repetitions=7", "advisory=yes", "ratio=0.25"])
    assert parsed == {"repetitions": 7, "advisory": True, "ratio": 0.25}
    with pytest.raises(ParamError):
        suite.parse_cli_params(["repetitions=$(id)"])
    with pytest.raises(ParamError, match="name=value"):
        suite.parse_cli_params(["repetitions"])


@pytest.mark.parametrize(
    "change",
    [
        {"programs": ["../../bin/sh"]},
        {"programs": ["/bin/sh"]},
        {"programs": []},
        {"params": {"x": {"type": "integer", "flag": "--x; id"}}},
        {"params": {"x": {"type": "string", "flag": "--x"}}},
        {"params": {"x": {"type": "enum", "flag": "--x", "choices": ["a b"]}}},
        {"name": "other"},
    ],
)
def test_bad_declarations_are_refused(change: dict[str, Any], suites_dir: Path) -> None:
    raw = json.loads((suites_dir / "fake.json").read_text())
    raw.update(change)
    with pytest.raises(SuiteError):
        parse_suite(raw, source=suites_dir / "fake.json")


def test_concurrency_params_reach_only_their_programs() -> None:
    suite = load_suite("concurrency")
    assert suite.programs == ("concurrency_test", "concurrency_records")
    params = suite.validate(
        {
            "procs": 4,
            "durability": "durable",
            "txns": 500,
            "tests": "A",
            "nrec": 200,
            "variant": "fine",
            "repetitions": 2,
        }
    )
    b = Path("/b")
    assert suite.argv("concurrency_test", "quick", params, b) == [
        "/b/concurrency_test",
        "--quick",
        "--procs",
        "4",
        "--durability",
        "durable",
        "--txns",
        "500",
        "--tests",
        "A",
    ]
    assert suite.argv("concurrency_records", "quick", params, b) == [
        "/b/concurrency_records",
        "--quick",
        "--procs",
        "4",
        "--durability",
        "durable",
        "--nrec",
        "200",
        "--variant",
        "fine",
        "--reps",
        "2",
    ]
    assert suite.argv("concurrency_records", "full", {"txns": 9}, b) == ["/b/concurrency_records"]


def test_a_program_list_must_name_programs_of_the_suite(suites_dir: Path) -> None:
    raw = json.loads((suites_dir / "fake.json").read_text())
    raw["programs"] = ["fake_bench", "other_bench"]
    raw["params"]["repetitions"]["programs"] = ["other_bench"]
    suite = parse_suite(raw, source=suites_dir / "fake.json")
    assert suite.argv("fake_bench", "full", {"repetitions": 3}, Path("/b")) == ["/b/fake_bench"]
    assert suite.argv("other_bench", "full", {"repetitions": 3}, Path("/b")) == [
        "/b/other_bench",
        "--reps",
        "3",
    ]
    for bad in (["missing_bench"], [], "fake_bench", ["fake_bench", "fake_bench"], [["x"]]):
        raw["params"]["repetitions"]["programs"] = bad
        with pytest.raises(SuiteError, match="'programs' must be a non-empty list"):
            parse_suite(raw, source=suites_dir / "fake.json")
