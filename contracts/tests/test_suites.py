"""The suite parser and contracts/suite.schema.json: one strictness, clear refusals."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from xaclab_contracts.files import SUITE_SCHEMA, SUITES_DIR
from xaclab_contracts.suites import (
    ParamDecl,
    ParamError,
    SuiteError,
    check_param,
    debian_packages,
    declared_systems,
    list_suites,
    load_suite,
    load_suites,
    parse_suite,
)

SCHEMA = jsonschema.Draft202012Validator(json.loads(SUITE_SCHEMA.read_text()))
MINIMAL: dict[str, Any] = {
    "name": "x",
    "programs": ["a", "b"],
    "sut": {"a": ["libxac"], "b": ["os"]},
    "systems": {
        "libxac": {
            "title": "LIBXAC",
            "modes": {"on": "durable", "off": "nondurable"},
            "packages": [],
        },
        "os": {"title": "the OS", "modes": {}, "packages": ["util-linux"], "processes": "one"},
    },
    "profiles": {"quick": ["--quick"], "full": []},
    "params": {
        "reps": {"type": "integer", "min": 1, "max": 9, "flag": "--reps", "role": "workload"},
        "mode": {"type": "enum", "choices": ["on", "off"], "flag": "--mode", "role": "system"},
    },
    "recorded": {"kernel_way": {"role": "observed"}},
}


def declaration(**changes: Any) -> dict[str, Any]:
    changed = copy.deepcopy(MINIMAL)
    changed.update(changes)
    return changed


@pytest.mark.parametrize("name", sorted(p.stem for p in SUITES_DIR.glob("*.json")))
def test_every_shipped_suite_matches_the_schema_and_declares_everything(name: str) -> None:
    raw = json.loads((SUITES_DIR / f"{name}.json").read_text())
    SCHEMA.validate(raw)
    suite = load_suite(name)
    assert set(suite.systems) == set(suite.programs), "every program declares its systems"
    undeclared = [p for p, d in raw.get("params", {}).items() if "role" not in d]
    assert not undeclared, f"{name}: params without a role: {undeclared}"
    assert suite.profiles.keys() >= {"quick", "full"}
    if name != "crash-consistency":
        # The change detector's series come from the watch profile: the quick programs,
        # each result the best of three runs, and best_of declared as the param it adds.
        assert suite.profiles["watch"] == suite.profiles["quick"]
        assert suite.best_of["watch"].runs == 3 and suite.recorded["best_of"] == "workload"


def test_the_shipped_suites_load_by_name() -> None:
    assert list_suites() == sorted(load_suites())
    assert {"page-touch", "storage", "concurrency", "search-tree"} <= set(list_suites())
    search_tree = load_suite("search-tree")
    assert search_tree.all_systems == ("libxac", "bdb", "lmdb", "sqlite", "pmemobj", "rocksdb")
    assert search_tree.role("tree") == "system" and search_tree.role("count") == "workload"
    assert search_tree.role("write_protect") == "observed"
    assert search_tree.role("write_cache") == "workload", "the agent's factors are workload"
    assert search_tree.role("no_such_param") is None


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"programs": "a"}, "'programs' must be a non-empty list of program names"),
        ({"programs": []}, "should be non-empty"),
        ({"programs": ["../../bin/sh", "b"]}, "at programs/0"),
        ({"programs": ["a", "a"]}, "non-unique"),
        ({"params": {"p": {"type": "string", "flag": "--p"}}}, "at params/p/type"),
        ({"params": {"p": {"type": "integer", "flag": "--p; id"}}}, "at params/p/flag"),
        ({"params": {"p": {"type": "integer"}}}, "'flag' is a required property"),
        ({"params": {"p": {"type": "enum", "flag": "--p"}}}, "'choices' is a required property"),
        ({"params": {"p": {"type": "enum", "flag": "--p", "choices": ["a b"]}}}, "enum choice"),
        ({"params": {"p": {"type": "enum", "flag": "--p", "choices": ["-rf"]}}}, "enum choice"),
        ({"params": {"p": {"type": "integer", "flag": "--p", "choices": ["1"]}}}, "params/p"),
        ({"params": {"p": {"type": "integer", "flag": "--p", "role": "knob"}}}, "workload:"),
        ({"params": {"p": {"type": "integer", "flag": "--p", "min": True}}}, "params/p/min"),
        ({"params": {"Bad": {"type": "integer", "flag": "--p"}}}, "at params"),
        ({"recorded": {"k": {}}}, "'role' is a required property"),
        ({"recorded": {"k": {"role": "workload", "unit": "ms"}}}, "Additional properties"),
        ({"sut": {"a": ["LIBXAC"], "b": ["os"]}}, "A system under test"),
        ({"sut": {"a": [], "b": ["os"]}}, "should be non-empty"),
        ({"profiles": {}}, "at profiles"),
        ({"profiles": {"quick": "--quick"}}, "at profiles/quick"),
        ({"dir_flag": "dir"}, "at dir_flag"),
        ({"systems": {"os": {"title": "OS", "packages": []}}}, "'modes' is a required property"),
        (
            {"systems": {"os": {"title": "OS", "modes": {"x": "mostly"}, "packages": []}}},
            "at systems/os/modes/x",
        ),
        (
            {"systems": {"os": {"title": "OS", "modes": {}, "packages": ["Lib DB"]}}},
            "A Debian package name",
        ),
        (
            {"systems": {"os": {"title": "OS", "modes": {}, "packages": [], "x": 1}}},
            "Additional properties",
        ),
        ({"colour": "blue"}, "'colour' was unexpected"),
    ],
)
def test_the_schema_refuses_and_the_parser_says_where(change: dict[str, Any], words: str) -> None:
    raw = declaration(**change)
    assert not SCHEMA.is_valid(raw), "the schema file refuses it too"
    with pytest.raises(SuiteError, match="x.json: at ") as caught:
        parse_suite(raw, source=Path("x.json"))
    assert words in str(caught.value)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"name": "other"}, "'name' must equal the file name ('x'), not 'other'"),
        ({"params": {"p": {"type": "integer", "flag": "--p", "programs": ["c"]}}}, "not 'c'"),
        ({"params": {"p": {"type": "integer", "flag": "--p", "min": 5, "max": 1}}}, "above max"),
        ({"sut": {"a": ["libxac"]}}, "'sut' has no entry for program 'b'"),
        ({"sut": {"a": ["libxac"], "b": ["os"], "c": ["os"]}}, "'sut' names 'c'"),
        (
            {"sut": {"a": ["libxac"], "b": ["bdb"]}},
            "'sut' of 'b' names system 'bdb', which 'systems' does not declare",
        ),
        ({"recorded": {"reps": {"role": "workload"}}}, "in both 'params' and 'recorded'"),
        ({"recorded": {"write_cache": {"role": "system"}}}, "a factor the agent applies"),
        ({"params": {"timeout": {"type": "integer", "flag": "--t"}}}, "a factor the agent"),
        (
            {"params": {"m": {"type": "enum", "choices": ["on"], "flag": "--m", "default": "of"}}},
            "parameter 'm': its default: Parameter 'm' must be one of on, not 'of'.",
        ),
        (
            {"params": {"p": {"type": "integer", "flag": "--p", "max": 9, "default": 10}}},
            "its default: Parameter 'p' = 10 is outside",
        ),
        (
            {"params": {"f": {"type": "boolean", "flag": "--f", "default": True}}},
            "parameter 'f': a boolean has no default (it is false)",
        ),
        (
            {"rules": [{"when": {"mode": "a"}, "param": "procs", "min": 2, "error": "x"}]},
            "a rule names 'procs', not a parameter of the suite",
        ),
    ],
)
def test_what_a_schema_cannot_say_is_checked_after_it(change: dict[str, Any], words: str) -> None:
    with pytest.raises(SuiteError, match="x.json: ") as caught:
        parse_suite(declaration(**change), source=Path("x.json"))
    assert words in str(caught.value)


def test_systems_are_declared_with_their_modes_durability_and_packages() -> None:
    suite = parse_suite(declaration(), source=Path("x.json"))
    libxac, os_decl = suite.system_decls["libxac"], suite.system_decls["os"]
    assert libxac.title == "LIBXAC" and libxac.processes == "many"
    assert libxac.durability("on") == "durable" and libxac.durability("nope") is None
    assert os_decl.packages == ("util-linux",) and os_decl.processes == "one"
    assert debian_packages({"x": suite}) == ["util-linux"]


def test_one_system_declared_two_ways_is_refused(tmp_path: Path) -> None:
    one = declaration(name="one")
    two = declaration(name="two")
    two["systems"]["libxac"] = {"title": "LIBXAC", "modes": {"on": "nondurable"}, "packages": []}
    for raw in (one, two):
        (tmp_path / f"{raw['name']}.json").write_text(json.dumps(raw))
    with pytest.raises(SuiteError, match="declare system 'libxac' differently"):
        load_suites(tmp_path)
    two["systems"]["libxac"] = one["systems"]["libxac"]
    (tmp_path / "two.json").write_text(json.dumps(two))
    assert set(declared_systems(load_suites(tmp_path))) == {"libxac", "os"}


def test_the_install_script_reads_the_same_packages_as_the_parser() -> None:
    script = Path(__file__).resolve().parents[2] / "scripts" / "system-packages.py"
    printed = subprocess.run([str(script)], capture_output=True, text=True, check=True).stdout
    assert printed.split() == debian_packages(load_suites())
    assert {"libsqlite3-dev", "libpmemobj-dev", "librocksdb-dev"} <= set(printed.split())


def test_a_file_without_sut_or_roles_still_loads_with_the_defaults() -> None:
    older = declaration()
    del older["sut"], older["systems"], older["recorded"], older["params"]["reps"]["role"]
    suite = parse_suite(older, source=Path("x.json"))
    assert suite.systems == {} and suite.all_systems == ()
    assert suite.role("reps") == "workload" and suite.role("mode") == "system"


def test_a_broken_file_and_a_missing_directory_are_refused(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(SuiteError, match="broken.json: unreadable"):
        load_suites(tmp_path)
    with pytest.raises(SuiteError, match="does not exist"):
        load_suites(tmp_path / "nope")


@pytest.mark.parametrize("name", ["../page-touch", "..", "/etc/passwd", "Page", "", 7, "a" * 41])
def test_suite_names_are_checked_before_any_path(name: Any) -> None:
    with pytest.raises(SuiteError, match="not a valid suite name"):
        load_suite(name)


def test_an_unknown_suite_lists_the_known_ones() -> None:
    with pytest.raises(SuiteError, match=r"unknown suite 'nope' \(known: concurrency, "):
        load_suite("nope")


def test_argv_follows_the_declaration() -> None:
    suite = parse_suite(
        declaration(
            params={
                "reps": {"type": "integer", "flag": "--reps", "programs": ["b"]},
                "fast": {"type": "boolean", "flag": "--fast"},
                "mode": {"type": "enum", "choices": ["on", "off"], "flag": "--mode"},
            }
        ),
        source=Path("x.json"),
    )
    params = suite.validate({"mode": "off", "reps": 3, "fast": True})
    bin_dir = Path("/opt/bin")
    assert suite.argv("a", "quick", params, bin_dir) == [
        "/opt/bin/a",
        "--quick",
        "--fast",
        "--mode",
        "off",
    ]
    assert suite.argv("b", "full", {**params, "fast": False}, bin_dir) == [
        "/opt/bin/b",
        "--reps",
        "3",
        "--mode",
        "off",
    ]
    with pytest.raises(SuiteError, match="no program 'c'"):
        suite.argv("c", "quick", {}, bin_dir)
    with pytest.raises(ParamError, match="no profile 'slow'; its profiles are: quick, full"):
        suite.argv("a", "slow", {}, bin_dir)


def test_a_declared_default_runs_where_the_job_leaves_the_parameter_out() -> None:
    suite = parse_suite(
        declaration(
            params={
                "mode": {
                    "type": "enum",
                    "choices": ["on", "off"],
                    "flag": "--mode",
                    "default": "off",
                },
                "reps": {"type": "integer", "flag": "--reps", "programs": ["b"], "default": 2},
                "fast": {"type": "boolean", "flag": "--fast"},
            }
        ),
        source=Path("x.json"),
    )
    bin_dir = Path("/opt/bin")
    assert suite.argv("a", "quick", {}, bin_dir) == ["/opt/bin/a", "--quick", "--mode", "off"]
    assert suite.argv("b", "full", {}, bin_dir) == ["/opt/bin/b", "--mode", "off", "--reps", "2"]
    # A value the job gives wins over the default; the job's params are not changed.
    given = {"mode": "on"}
    assert suite.argv("b", "full", given, bin_dir) == ["/opt/bin/b", "--mode", "on", "--reps", "2"]
    assert given == {"mode": "on"}
    assert suite.defaults_for(given) == {"reps": 2}
    assert suite.with_defaults({"fast": True}) == {"mode": "off", "reps": 2, "fast": True}


def test_the_search_tree_suite_runs_every_system_alike_by_default() -> None:
    suite = load_suite("search-tree")
    bin_dir = Path("/opt/bin")
    for program in suite.programs:
        argv = suite.argv(program, "quick", {}, bin_dir)
        assert argv[argv.index("--durability") + 1] == "nondurable", argv
        chosen = suite.argv(program, "quick", {"durability": "durable"}, bin_dir)
        assert chosen.count("--durability") == 1 and chosen[-1] == "durable"


def test_cli_params_are_typed_then_checked() -> None:
    suite = parse_suite(declaration(), source=Path("x.json"))
    assert suite.parse_cli_params(["reps=7", "mode=on"]) == {"reps": 7, "mode": "on"}
    with pytest.raises(ParamError, match="name=value"):
        suite.parse_cli_params(["reps"])
    with pytest.raises(ParamError, match="must be an integer, not '7x'"):
        suite.parse_cli_params(["reps=7x"])
    with pytest.raises(ParamError, match="does not declare a parameter 'colour'"):
        suite.parse_cli_params(["colour=red"])


@pytest.mark.parametrize(
    ("decl", "value", "words"),
    [
        (ParamDecl("n", "integer", "--n", min=1, max=9), 0, "'n' = 0 is outside [1, 9]: below"),
        (ParamDecl("n", "integer", "--n", min=1, max=9), 10, "above its maximum 9"),
        (ParamDecl("n", "integer", "--n", min=1), 10**30, None),
        (ParamDecl("n", "integer", "--n"), 2.0, "must be an integer, not 2.0"),
        (ParamDecl("n", "integer", "--n"), True, "must be an integer, not True"),
        (ParamDecl("r", "number", "--r", min=0, max=1), float("nan"), "finite number"),
        (ParamDecl("r", "number", "--r", min=0, max=1), float("inf"), "finite number"),
        (ParamDecl("r", "number", "--r", min=0, max=1), 1, None),
        (ParamDecl("b", "boolean", "--b"), 1, "true or false, not 1"),
        (ParamDecl("e", "enum", "--e", choices=("a", "b")), "c", "one of a, b, not 'c'"),
        (ParamDecl("e", "enum", "--e", choices=("a", "b")), 1, "one of a, b, not 1"),
        (ParamDecl("e", "enum", "--e", choices=("a", "b")), "$(id)", "not allowed"),
        (ParamDecl("e", "enum", "--e", choices=("a", "b")), "a; rm -rf /", "not allowed"),
    ],
)
def test_values_outside_a_declaration_are_refused(
    decl: ParamDecl, value: object, words: str | None
) -> None:
    if words is None:
        check_param(decl, value)
        return
    with pytest.raises(ParamError) as caught:
        check_param(decl, value)
    assert words in str(caught.value)


def test_params_must_be_an_object_of_declared_names() -> None:
    suite = parse_suite(declaration(), source=Path("x.json"))
    with pytest.raises(ParamError, match="JSON object, not list"):
        suite.validate(["--reps", "5"])
    with pytest.raises(ParamError, match="its parameters are: mode, reps"):
        suite.validate({"write_cache": "on"})


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"op": "mixed", "procs": 1, "readers": 1}, "readers must be below procs"),
        ({"op": "mixed", "readers": 1}, "readers must be below procs"),
        ({"op": "mixed", "procs": 4, "readers": 4}, "readers must be below procs"),
        ({"op": "mixed", "procs": 2, "readers": 9}, "readers must be below procs"),
        ({"op": "mixed", "procs": 2}, None),
        ({"op": "mixed", "procs": 64, "readers": 63}, None),
        # Nobody searching: the writers' baseline on the loaded store.
        ({"op": "mixed", "procs": 1, "readers": 0}, None),
        ({"op": "mixed", "procs": 4, "readers": 0}, None),
        ({"op": "mixed"}, None),
        # Under another op the programs ignore readers (and say so): nothing to refuse.
        ({"op": "insert", "readers": 5}, None),
        ({"readers": 5}, None),
    ],
)
def test_rules_refuse_parameters_that_do_not_fit_together(
    params: dict[str, Any], words: str | None
) -> None:
    """search-tree's rules: a mixed run needs a process that inserts (readers 0: nobody
    searches), what the programs refuse with exit 2 (docs/trees.md, "Searches beside inserts")."""
    suite = load_suite("search-tree")
    if words is None:
        assert suite.validate(params) == params
        return
    with pytest.raises(ParamError, match=words):
        suite.validate(params)
