"""Suite declarations (docs/suites.md): validate a job's parameters, build argument vectors.

Everything a job asks for is checked here before anything runs.  The checks
are deliberately stricter than ``shell=False`` needs: a value that would be
harmless as one argv element is still refused if it looks like an attack,
so a hostile job fails with a clear reason instead of running at all.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from xaclab_agent.errors import ParamError, SuiteError

SUITE_NAME = re.compile(r"[a-z][a-z0-9-]{0,39}")
PARAM_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
PROGRAM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,79}")
FLAG = re.compile(r"--?[A-Za-z0-9][A-Za-z0-9-]*")
# What an enum choice may look like; anything else (shell metacharacters,
# slashes, whitespace, a leading dash) is refused before it is looked up.
SAFE_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:+=-]{0,199}")
PARAM_TYPES = ("integer", "number", "boolean", "enum")


@dataclass(frozen=True)
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

    def applies_to(self, program: str) -> bool:
        return not self.programs or program in self.programs


@dataclass(frozen=True)
class Suite:
    name: str
    title: str
    programs: tuple[str, ...]
    profiles: dict[str, tuple[str, ...]]
    params: dict[str, ParamDecl]
    # The option that takes the directory under test (e.g. "--dir"); "" = none.
    dir_flag: str = ""

    def argv(self, program: str, profile: str, params: dict[str, Any], bin_dir: Path) -> list[str]:
        """The argument vector for ``program``; ``params`` must have passed :meth:`validate`."""
        if program not in self.programs:
            raise SuiteError(f"suite {self.name!r} has no program {program!r}")
        argv = [str(bin_dir / program), *self.profile_args(profile)]
        for name, decl in self.params.items():
            if name in params and decl.applies_to(program):
                argv.extend(_param_args(decl, params[name]))
        return argv

    def profile_args(self, profile: str) -> tuple[str, ...]:
        if not isinstance(profile, str) or profile not in self.profiles:
            known = ", ".join(sorted(self.profiles))
            raise SuiteError(f"suite {self.name!r} has no profile {profile!r} (known: {known})")
        return self.profiles[profile]

    def validate(self, params: object) -> dict[str, Any]:
        """Check a job's parameters against the declaration; return them unchanged."""
        if not isinstance(params, dict):
            raise ParamError(f"params must be a JSON object, not {type(params).__name__}")
        for name, value in params.items():
            decl = self.params.get(name) if isinstance(name, str) else None
            if decl is None:
                declared = ", ".join(self.params) or "none"
                raise ParamError(
                    f"parameter {_show(name)} is not declared by suite {self.name!r} "
                    f"(declared: {declared})"
                )
            _check_value(decl, value)
        return params

    def parse_cli_params(self, pairs: list[str]) -> dict[str, Any]:
        """Turn ``k=v`` strings from the command line into typed values (then validate)."""
        params: dict[str, Any] = {}
        for pair in pairs:
            name, sep, text = pair.partition("=")
            if not sep:
                raise ParamError(f"--param {pair!r} is not of the form name=value")
            decl = self.params.get(name)
            if decl is None:
                raise ParamError(f"parameter {_show(name)} is not declared by suite {self.name!r}")
            params[name] = _parse_text(decl, text)
        return self.validate(params)


def default_suites_dir() -> Path:
    return Path(str(resources.files("xaclab_agent").joinpath("suites")))


def load_suite(name: str, suites_dir: Path | None = None) -> Suite:
    """Load ``<suites_dir>/<name>.json``; the name is checked before any path is built."""
    if not isinstance(name, str) or not SUITE_NAME.fullmatch(name):
        raise SuiteError(f"unknown suite {_show(name)}: not a valid suite name")
    directory = suites_dir or default_suites_dir()
    path = directory / f"{name}.json"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        known = ", ".join(list_suites(directory)) or "none"
        raise SuiteError(f"unknown suite {name!r} (known: {known})") from None
    except (OSError, ValueError) as exc:
        raise SuiteError(f"suite declaration {path} is unreadable: {exc}") from exc
    return parse_suite(raw, expected_name=name)


def list_suites(suites_dir: Path | None = None) -> list[str]:
    directory = suites_dir or default_suites_dir()
    return sorted(p.stem for p in directory.glob("*.json") if SUITE_NAME.fullmatch(p.stem))


def parse_suite(raw: object, *, expected_name: str) -> Suite:
    """Check a declaration the way the agent will use it, so a bad file fails early."""
    where = f"suite declaration {expected_name!r}"
    if not isinstance(raw, dict) or raw.get("name") != expected_name:
        raise SuiteError(f"{where}: 'name' must equal the file name")
    programs = raw.get("programs")
    if not isinstance(programs, list) or not programs:
        raise SuiteError(f"{where}: 'programs' must be a non-empty list")
    for program in programs:
        if not isinstance(program, str) or not PROGRAM_NAME.fullmatch(program):
            raise SuiteError(f"{where}: program {_show(program)} is not a plain file name")
    profiles = raw.get("profiles")
    if not isinstance(profiles, dict) or not profiles:
        raise SuiteError(f"{where}: 'profiles' must be a non-empty object")
    for pname, args in profiles.items():
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise SuiteError(f"{where}: profile {pname!r} must be a list of strings")
    params_raw = raw.get("params", {})
    if not isinstance(params_raw, dict):
        raise SuiteError(f"{where}: 'params' must be an object")
    params = {n: _parse_decl(where, n, d, programs) for n, d in params_raw.items()}
    dir_flag = raw.get("dir_flag", "")
    if dir_flag and (not isinstance(dir_flag, str) or not FLAG.fullmatch(dir_flag)):
        raise SuiteError(f"{where}: 'dir_flag' must be an option such as '--dir'")
    return Suite(
        name=expected_name,
        title=str(raw.get("title", expected_name)),
        programs=tuple(programs),
        profiles={k: tuple(v) for k, v in profiles.items()},
        params=params,
        dir_flag=dir_flag,
    )


def _parse_decl(where: str, name: object, decl: object, programs: list[str]) -> ParamDecl:
    if not isinstance(name, str) or not PARAM_NAME.fullmatch(name):
        raise SuiteError(f"{where}: parameter name {_show(name)} is not snake_case")
    if not isinstance(decl, dict):
        raise SuiteError(f"{where}: parameter {name!r} must be an object")
    ptype, flag = decl.get("type"), decl.get("flag")
    if ptype not in PARAM_TYPES:
        raise SuiteError(f"{where}: parameter {name!r} has unknown type {ptype!r}")
    if not isinstance(flag, str) or not FLAG.fullmatch(flag):
        raise SuiteError(f"{where}: parameter {name!r} has an invalid flag {flag!r}")
    bounds: list[float | None] = []
    for key in ("min", "max"):
        value = decl.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise SuiteError(f"{where}: parameter {name!r} has a non-numeric {key}")
        bounds.append(value)
    choices = decl.get("choices", [])
    if ptype == "enum" and (
        not isinstance(choices, list)
        or not choices
        or not all(isinstance(c, str) and SAFE_WORD.fullmatch(c) for c in choices)
    ):
        raise SuiteError(f"{where}: enum parameter {name!r} needs plain-word 'choices'")
    applies = decl.get("programs", [])
    if (
        not isinstance(applies, list)
        or ("programs" in decl and not applies)
        or not all(isinstance(p, str) and p in programs for p in applies)
        or len(set(applies)) != len(applies)
    ):
        raise SuiteError(
            f"{where}: parameter {name!r}: 'programs' must be a non-empty list of distinct "
            f"programs of the suite ({', '.join(programs)})"
        )
    return ParamDecl(
        name=name,
        type=str(ptype),
        flag=flag,
        help=str(decl.get("help", "")),
        min=bounds[0],
        max=bounds[1],
        choices=tuple(choices) if ptype == "enum" else (),
        programs=tuple(applies),
    )


def _check_value(decl: ParamDecl, value: object) -> None:
    label = f"parameter {decl.name!r}"
    if decl.type == "boolean":
        if not isinstance(value, bool):
            raise ParamError(f"{label} must be true or false, not {_show(value)}")
        return
    if decl.type == "enum":
        if not isinstance(value, str):
            raise ParamError(f"{label} must be one of {list(decl.choices)}, not {_show(value)}")
        if not SAFE_WORD.fullmatch(value):
            raise ParamError(
                f"{label} value {_show(value)} contains characters that are not allowed "
                "(shell metacharacters, path separators, whitespace or a leading '-')"
            )
        if value not in decl.choices:
            raise ParamError(f"{label} must be one of {list(decl.choices)}, not {value!r}")
        return
    if decl.type == "integer" and (isinstance(value, bool) or not isinstance(value, int)):
        raise ParamError(f"{label} must be an integer, not {_show(value)}")
    if decl.type == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ParamError(f"{label} must be a number, not {_show(value)}")
        if not math.isfinite(value):
            raise ParamError(f"{label} must be finite, not {value!r}")
    assert isinstance(value, int | float)
    if (decl.min is not None and value < decl.min) or (decl.max is not None and value > decl.max):
        raise ParamError(f"{label} = {value!r} is outside [{decl.min}, {decl.max}]")


def _parse_text(decl: ParamDecl, text: str) -> object:
    """Command-line text to a typed value; a failure leaves the text for _check_value to refuse."""
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


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
