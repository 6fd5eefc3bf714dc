"""Suite declarations (docs/suites.md): one parser, one strictness, for the agent and the server.

A declaration must match contracts/suite.schema.json; then :func:`parse_suite`
checks what a schema cannot say (the name equals the file name, a parameter's
``programs`` are programs of the suite, ``sut`` covers exactly the suite's
programs, a name is declared once).  A file that fails either is refused with
a :class:`SuiteError` that names the file, the place and the rule.

A job's parameters are checked by :meth:`Suite.validate`; the values a
declaration allows are deliberately narrower than ``shell=False`` needs (enum
choices are plain words), so a hostile job fails with a clear reason, on the
server at queue time and on the agent before anything runs.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, cast

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from xaclab_contracts.files import SUITE_SCHEMA, SUITES_DIR

SUITE_NAME = re.compile(r"[a-z][a-z0-9-]{0,39}")
# What an enum value may look like (the schema holds choices to it too); anything
# else (shell metacharacters, slashes, whitespace, a leading dash) is refused
# with its own sentence before it is looked up.
SAFE_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:+=-]{0,199}")
PARAM_TYPES = ("integer", "number", "boolean", "enum")
Role = Literal["workload", "system", "observed"]
ROLES: tuple[Role, ...] = ("workload", "system", "observed")
# The factors the agent applies itself (factors.py); no suite declares them.
AGENT_FACTOR_NAMES = (
    "write_cache",
    "pin_cpu",
    "drop_caches",
    "target_dir",
    "timeout",
    "libxac_revision",
)


class SuiteError(ValueError):
    """An unknown suite or profile, or a declaration that does not follow docs/suites.md."""


class ParamError(SuiteError):
    """A job parameter outside its suite's declaration; the message is a sentence for the user."""


@dataclass(frozen=True, slots=True)
class ParamDecl:
    name: str
    type: str
    flag: str
    help: str = ""
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()
    # The programs that get this parameter; empty means every program of the suite.
    programs: tuple[str, ...] = ()
    role: Role = "workload"
    # What a job that leaves the parameter out runs with; None: not passed, so each
    # program's own default applies.
    default: object = None

    def applies_to(self, program: str) -> bool:
        return not self.programs or program in self.programs


@dataclass(frozen=True, slots=True)
class ParamRule:
    """A check across parameters (the schema's ``rules``): under ``when``, ``param`` is at
    least ``min`` and below the value of ``below``, or the job is refused with ``error``."""

    when: dict[str, object]
    param: str
    error: str
    assume: dict[str, int] = field(default_factory=dict)
    min: int | None = None
    below: str | None = None

    def check(self, params: dict[str, Any]) -> None:
        if any(params.get(name) != value for name, value in self.when.items()):
            return
        values = {**self.assume, **params}
        value = values.get(self.param)
        if value is None:
            return
        bound = values.get(self.below) if self.below is not None else None
        if (self.min is not None and value < self.min) or (bound is not None and value >= bound):
            raise ParamError(self.error)


@dataclass(frozen=True, slots=True)
class SystemDecl:
    """A system under test as a suite declares it (docs/suites.md, "Systems")."""

    name: str
    title: str
    # Mode (the result param "mode") -> "durable" or "nondurable".
    modes: dict[str, str]
    # Debian packages a lab machine needs to build and run it.
    packages: tuple[str, ...]
    help: str = ""
    # "many": several processes may share one store; "one": one at a time.
    processes: str = "many"

    def durability(self, mode: str) -> str | None:
        return self.modes.get(mode)


@dataclass(frozen=True, slots=True)
class RepeatUntil:
    """A profile's adaptive repetition: run again until every result's median is known
    within ``median_ci_percent`` (the 95% interval's half-width), or ``max_runs`` runs."""

    median_ci_percent: float
    max_runs: int


@dataclass(frozen=True, slots=True)
class BestOf:
    """A profile's best of several runs: ``runs`` runs, ``gap_s`` seconds apart (a slow
    spell of the machine lasts seconds, so runs back to back are often slow together)."""

    runs: int
    gap_s: float = 0.0


@dataclass(frozen=True, slots=True)
class Suite:
    name: str
    title: str
    description: str
    programs: tuple[str, ...]
    profiles: dict[str, tuple[str, ...]]
    params: dict[str, ParamDecl]
    # Params the programs record that are not job parameters -> their role.
    recorded: dict[str, Role]
    # Program -> the systems under test its results name; empty for a file without ``sut``.
    systems: dict[str, tuple[str, ...]]
    # The option that takes the directory under test (e.g. "--dir"); "" = none.
    dir_flag: str
    # System -> its declaration; every system of ``systems`` has one.
    system_decls: dict[str, SystemDecl]
    declaration: dict[str, Any]  # the file as written, served by GET /api/v1/suites
    # Profile -> its adaptive repetition; profiles without one run once.
    repeat: dict[str, RepeatUntil] = field(default_factory=dict)
    # Profile -> how many runs its results are the best of, and how far apart (``best_of``).
    best_of: dict[str, BestOf] = field(default_factory=dict)
    # Whether pages compare its systems as ratios (false: counts of failures, crash suite).
    system_ratios: bool = True
    # Checks across parameters (``rules``), in the order declared.
    rules: tuple[ParamRule, ...] = ()

    @property
    def all_systems(self) -> tuple[str, ...]:
        """Every system a program of the suite measures, in declaration order."""
        return tuple(dict.fromkeys(s for found in self.systems.values() for s in found))

    def role(self, param: str) -> Role | None:
        """The declared role of a result param; None when the suite does not declare it."""
        if param in self.params:
            return self.params[param].role
        if param in AGENT_FACTOR_NAMES:
            return "workload"
        return self.recorded.get(param)

    def argv(self, program: str, profile: str, params: dict[str, Any], bin_dir: Path) -> list[str]:
        """The argument vector for ``program``; ``params`` must have passed :meth:`validate`."""
        if program not in self.programs:
            raise SuiteError(f"Suite {self.name!r} has no program {program!r}.")
        argv = [str(bin_dir / program), *self.profile_args(profile)]
        given = self.with_defaults(params)
        for name, decl in self.params.items():
            if name in given and decl.applies_to(program):
                argv.extend(_param_args(decl, given[name]))
        return argv

    def with_defaults(self, params: dict[str, Any]) -> dict[str, Any]:
        """``params`` and, for each parameter they leave out, the suite's default if it
        declares one: what the programs run with."""
        return {**self.defaults_for(params), **params}

    def defaults_for(self, params: dict[str, Any]) -> dict[str, Any]:
        """The suite's defaults of the parameters ``params`` leaves out."""
        return {
            name: decl.default
            for name, decl in self.params.items()
            if decl.default is not None and name not in params
        }

    def profile_args(self, profile: object) -> tuple[str, ...]:
        if not isinstance(profile, str) or profile not in self.profiles:
            raise ParamError(
                f"Suite {self.name!r} has no profile {show(profile)}; "
                f"its profiles are: {', '.join(self.profiles)}."
            )
        return self.profiles[profile]

    def validate(self, params: object) -> dict[str, Any]:
        """Check a job's parameters (without the agent's factors); return them unchanged."""
        if not isinstance(params, dict):
            raise ParamError(f"Params must be a JSON object, not {type(params).__name__}.")
        for name, value in params.items():
            check_param(self.declared(name), value)
        for rule in self.rules:
            rule.check(params)
        return params

    def declared(self, name: object) -> ParamDecl:
        decl = self.params.get(name) if isinstance(name, str) else None
        if decl is None:
            declared = ", ".join(sorted(self.params)) or "none"
            raise ParamError(
                f"Suite {self.name!r} does not declare a parameter {show(name)}; "
                f"its parameters are: {declared}."
            )
        return decl

    def parse_cli_params(self, pairs: list[str]) -> dict[str, Any]:
        """Turn ``k=v`` strings from the command line into typed values (then validate)."""
        params: dict[str, Any] = {}
        for pair in pairs:
            name, sep, text = pair.partition("=")
            if not sep:
                raise ParamError(f"--param {pair!r} is not of the form name=value.")
            params[name] = _parse_text(self.declared(name), text)
        return self.validate(params)


def check_param(decl: ParamDecl, value: object) -> None:
    """Refuse a value of the wrong type, outside [min, max] or not among the choices."""
    label = f"Parameter {decl.name!r}"
    if decl.type == "boolean":
        if not isinstance(value, bool):
            raise ParamError(f"{label} must be true or false, not {show(value)}.")
        return
    if decl.type == "enum":
        if isinstance(value, str) and not SAFE_WORD.fullmatch(value):
            raise ParamError(
                f"{label} value {show(value)} contains characters that are not allowed "
                "(shell metacharacters, path separators, whitespace or a leading '-')."
            )
        if not isinstance(value, str) or value not in decl.choices:
            raise ParamError(
                f"{label} must be one of {', '.join(decl.choices)}, not {show(value)}."
            )
        return
    if decl.type == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParamError(f"{label} must be an integer, not {show(value)}.")
    elif isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ParamError(f"{label} must be a finite number, not {show(value)}.")
    if decl.min is not None and value < decl.min:
        raise ParamError(
            f"{label} = {value} is outside {_range(decl)}: below its minimum {decl.min}."
        )
    if decl.max is not None and value > decl.max:
        raise ParamError(
            f"{label} = {value} is outside {_range(decl)}: above its maximum {decl.max}."
        )


def _range(decl: ParamDecl) -> str:
    low = "-inf" if decl.min is None else decl.min
    high = "inf" if decl.max is None else decl.max
    return f"[{low}, {high}]"


def load_suite(name: object, directory: Path | None = None) -> Suite:
    """Load ``<directory>/<name>.json``; the name is checked before any path is built."""
    if not isinstance(name, str) or not SUITE_NAME.fullmatch(name):
        raise SuiteError(f"unknown suite {show(name)}: not a valid suite name")
    directory = directory or SUITES_DIR
    path = directory / f"{name}.json"
    if not path.is_file():
        known = ", ".join(list_suites(directory)) or "none"
        raise SuiteError(f"unknown suite {name!r} (known: {known})")
    return read_suite(path)


def list_suites(directory: Path | None = None) -> list[str]:
    directory = directory or SUITES_DIR
    return sorted(p.stem for p in directory.glob("*.json") if SUITE_NAME.fullmatch(p.stem))


def load_suites(directory: Path | None = None) -> dict[str, Suite]:
    """Every ``<name>.json`` in ``directory``, by name; one malformed file raises SuiteError,
    and so do two suites that declare one system differently."""
    directory = directory or SUITES_DIR
    if not directory.is_dir():
        raise SuiteError(f"suites directory {directory} does not exist")
    suites = {path.stem: read_suite(path) for path in sorted(directory.glob("*.json"))}
    declared_systems(suites)
    return suites


def declared_systems(suites: dict[str, Suite]) -> dict[str, SystemDecl]:
    """Every system the suites declare, by name, in suite order; SuiteError when two suites
    declare one system differently (a system has one declaration, however many suites run
    it)."""
    found: dict[str, tuple[str, SystemDecl]] = {}
    for suite in suites.values():
        for name, decl in suite.system_decls.items():
            if name in found and found[name][1] != decl:
                raise SuiteError(
                    f"suites {found[name][0]!r} and {suite.name!r} declare system {name!r} "
                    "differently; a system has one declaration"
                )
            found.setdefault(name, (suite.name, decl))
    return {name: decl for name, (_, decl) in found.items()}


def debian_packages(suites: dict[str, Suite]) -> list[str]:
    """The Debian packages every declared system needs, each once, sorted."""
    return sorted({p for decl in declared_systems(suites).values() for p in decl.packages})


def read_suite(path: Path) -> Suite:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SuiteError(f"{path}: unreadable: {exc}") from exc
    return parse_suite(raw, source=path)


@lru_cache(maxsize=1)
def _schema() -> Draft202012Validator:
    schema = json.loads(SUITE_SCHEMA.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def parse_suite(raw: object, *, source: Path) -> Suite:
    """Check a declaration read from ``source`` (whose stem is the suite's name)."""
    given = raw.get("name") if isinstance(raw, dict) else None
    if given is not None and given != source.stem:
        raise SuiteError(
            f"{source}: 'name' must equal the file name ({source.stem!r}), not {show(given)}"
        )
    error = best_match(_schema().iter_errors(raw))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        why = _rule(_schema().schema, list(error.absolute_schema_path))
        raise SuiteError(f"{source}: at {where}: {error.message}" + (f" ({why})" if why else ""))
    declaration = cast(dict[str, Any], raw)
    name: str = declaration["name"]
    programs: list[str] = declaration["programs"]
    params = {
        pname: _param(source, pname, decl, programs)
        for pname, decl in declaration.get("params", {}).items()
    }
    recorded: dict[str, Role] = {
        rname: entry["role"] for rname, entry in declaration.get("recorded", {}).items()
    }
    for pname in [*params, *recorded]:
        if pname in AGENT_FACTOR_NAMES:
            raise SuiteError(
                f"{source}: {pname!r} is a factor the agent applies; no suite declares it"
            )
        if pname in params and pname in recorded:
            raise SuiteError(f"{source}: {pname!r} is declared in both 'params' and 'recorded'")
    systems: dict[str, list[str]] = declaration.get("sut", {})
    if "sut" in declaration:
        for program in programs:
            if program not in systems:
                raise SuiteError(
                    f"{source}: 'sut' has no entry for program {program!r}; "
                    "every program declares the systems it measures"
                )
        for program in systems:
            if program not in programs:
                raise SuiteError(f"{source}: 'sut' names {program!r}, not a program of the suite")
    decls = {
        sname: SystemDecl(
            name=sname,
            title=entry["title"],
            modes=dict(entry["modes"]),
            packages=tuple(entry["packages"]),
            help=entry.get("help", ""),
            processes=entry.get("processes", "many"),
        )
        for sname, entry in declaration.get("systems", {}).items()
    }
    for program, found in systems.items():
        for sname in found:
            if sname not in decls:
                raise SuiteError(
                    f"{source}: 'sut' of {program!r} names system {sname!r}, which 'systems' "
                    "does not declare (its title, modes and packages)"
                )
    rules = tuple(
        ParamRule(
            when=dict(entry["when"]),
            param=entry["param"],
            error=entry["error"],
            assume=dict(entry.get("assume", {})),
            min=entry.get("min"),
            below=entry.get("below"),
        )
        for entry in declaration.get("rules", [])
    )
    for rule in rules:
        for pname in [*rule.when, *rule.assume, rule.param, *([rule.below] if rule.below else [])]:
            if pname not in params:
                raise SuiteError(f"{source}: a rule names {pname!r}, not a parameter of the suite")
    return Suite(
        name=name,
        title=declaration.get("title", name),
        description=declaration.get("description", ""),
        programs=tuple(programs),
        profiles={
            k: tuple(v["args"] if isinstance(v, dict) else v)
            for k, v in declaration["profiles"].items()
        },
        params=params,
        recorded=recorded,
        systems={program: tuple(found) for program, found in systems.items()},
        dir_flag=declaration.get("dir_flag", ""),
        system_decls=decls,
        declaration=declaration,
        repeat={
            k: RepeatUntil(
                float(v["repeat_until"]["median_ci_percent"]), int(v["repeat_until"]["max_runs"])
            )
            for k, v in declaration["profiles"].items()
            if isinstance(v, dict) and "repeat_until" in v
        },
        best_of={
            k: BestOf(int(v["best_of"]["runs"]), float(v["best_of"].get("gap_s", 0)))
            for k, v in declaration["profiles"].items()
            if isinstance(v, dict) and "best_of" in v
        },
        system_ratios=declaration.get("system_ratios", True),
        rules=rules,
    )


def _rule(schema: Any, path: list[Any]) -> str:
    """The description nearest the failing keyword on its schema path (below the top): the
    rule in words."""
    found, node = "", schema
    for step in path:
        if isinstance(node, dict) and step not in node and "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
            found = node.get("description", found)
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            break
        if isinstance(node, dict):
            if "$ref" in node:
                found = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]].get("description", found)
            found = node.get("description", found)
    return found


def _param(source: Path, name: str, decl: dict[str, Any], programs: list[str]) -> ParamDecl:
    applies = decl.get("programs", [])
    stray = [p for p in applies if p not in programs]
    if stray:
        raise SuiteError(
            f"{source}: parameter {name!r}: 'programs' must be a non-empty list of distinct "
            f"programs of the suite ({', '.join(programs)}), not {', '.join(map(repr, stray))}"
        )
    low, high = decl.get("min"), decl.get("max")
    if low is not None and high is not None and low > high:
        raise SuiteError(f"{source}: parameter {name!r}: min {low} is above max {high}")
    parsed = ParamDecl(
        name=name,
        type=decl["type"],
        flag=decl["flag"],
        help=decl.get("help", ""),
        min=low,
        max=high,
        choices=tuple(decl.get("choices", ())),
        programs=tuple(applies),
        role=decl.get("role", "workload"),
        default=decl.get("default"),
    )
    if parsed.default is None:
        return parsed
    if parsed.type == "boolean":
        # A form's unticked box sends nothing, so a default of true could not be undone.
        raise SuiteError(f"{source}: parameter {name!r}: a boolean has no default (it is false)")
    try:
        check_param(parsed, parsed.default)
    except ParamError as refused:
        raise SuiteError(f"{source}: parameter {name!r}: its default: {refused}") from None
    return parsed


def _parse_text(decl: ParamDecl, text: str) -> object:
    """Command-line text to a typed value; a failure leaves the text for check_param to refuse."""
    try:
        if decl.type == "integer":
            return int(text, 10)
        if decl.type == "number":
            return float(text)
    except ValueError:
        return text
    if decl.type == "boolean":
        lowered = text.lower()
        if lowered in ("true", "yes", "on", "1"):
            return True
        if lowered in ("false", "no", "off", "0"):
            return False
    return text


def _param_args(decl: ParamDecl, value: Any) -> list[str]:
    if decl.type == "boolean":
        return [decl.flag] if value else []
    return [decl.flag, str(value)]


def show(value: object) -> str:
    """A value for a message: its repr, cut at 80 characters."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
