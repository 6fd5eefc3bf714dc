"""Suite declarations (docs/suites.md): loading them and checking run parameters.

The server builds its run form from the same files the agent uses to build
argument vectors, and refuses a run whose parameters the agent would refuse.
"""

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SUITE_NAME = re.compile(r"^[a-z][a-z0-9-]*$")
PARAM_TYPES = ("integer", "number", "boolean", "enum")
TARGET_DIR = re.compile(r"^/[A-Za-z0-9._+/-]{0,4095}$")


class SuiteError(ValueError):
    """A suite file that does not follow docs/suites.md."""


class ParamError(ValueError):
    """A run request outside its suite's declaration; the message is a sentence for the user."""


@dataclass(frozen=True, slots=True)
class ParamDecl:
    name: str
    type: str
    flag: str
    help: str
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()
    # The programs the agent passes this parameter to; empty means every program.
    programs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Suite:
    name: str
    title: str
    description: str
    profiles: tuple[str, ...]
    params: dict[str, ParamDecl]
    declaration: dict[str, Any]  # the file as written, served by GET /api/v1/suites
    programs: tuple[str, ...] = ()


def load_suites(directory: Path) -> dict[str, Suite]:
    """Every ``<name>.json`` in ``directory``, by name; a malformed file raises SuiteError."""
    if not directory.is_dir():
        raise SuiteError(f"suites directory {directory} does not exist")
    suites: dict[str, Suite] = {}
    for path in sorted(directory.glob("*.json")):
        try:
            declaration = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise SuiteError(f"{path}: {exc}") from exc
        suite = parse_suite(declaration, source=path)
        suites[suite.name] = suite
    return suites


def parse_suite(declaration: Any, *, source: Path) -> Suite:
    if not isinstance(declaration, dict):
        raise SuiteError(f"{source}: a suite declaration is a JSON object")
    name = declaration.get("name")
    if not isinstance(name, str) or not SUITE_NAME.match(name) or name != source.stem:
        raise SuiteError(f"{source}: 'name' must be [a-z][a-z0-9-]* and equal the file name")
    profiles = declaration.get("profiles")
    if not isinstance(profiles, dict) or not profiles:
        raise SuiteError(f"{source}: 'profiles' must be a non-empty object")
    programs = declaration.get("programs")
    if (
        not isinstance(programs, list)
        or not programs
        or not all(isinstance(p, str) and p for p in programs)
    ):
        raise SuiteError(f"{source}: 'programs' must be a non-empty list of program names")
    raw_params = declaration.get("params", {})
    if not isinstance(raw_params, dict):
        raise SuiteError(f"{source}: 'params' must be an object")
    params = {
        pname: _parse_param(pname, decl, source=source, programs=programs)
        for pname, decl in raw_params.items()
    }
    return Suite(
        name=name,
        title=str(declaration.get("title", name)),
        description=str(declaration.get("description", "")),
        profiles=tuple(profiles),
        params=params,
        declaration=declaration,
        programs=tuple(programs),
    )


def _parse_param(name: str, decl: Any, *, source: Path, programs: list[str]) -> ParamDecl:
    if not isinstance(decl, dict) or decl.get("type") not in PARAM_TYPES:
        raise SuiteError(f"{source}: parameter {name!r} needs a type among {PARAM_TYPES}")
    ptype = decl["type"]
    choices: tuple[str, ...] = ()
    if ptype == "enum":
        raw = decl.get("choices")
        if not isinstance(raw, list) or not raw or not all(isinstance(c, str) for c in raw):
            raise SuiteError(f"{source}: enum parameter {name!r} needs a list of string choices")
        choices = tuple(raw)
    bounds: list[float | None] = []
    for key in ("min", "max"):
        value = decl.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise SuiteError(f"{source}: parameter {name!r} has a non-numeric {key!r}")
        bounds.append(value)
    applies = decl.get("programs", [])
    if (
        not isinstance(applies, list)
        or ("programs" in decl and not applies)
        or not all(isinstance(p, str) and p in programs for p in applies)
        or len(set(applies)) != len(applies)
    ):
        raise SuiteError(
            f"{source}: parameter {name!r}: 'programs' must be a non-empty list of distinct "
            f"programs of the suite ({', '.join(programs)})"
        )
    return ParamDecl(
        name=name,
        type=ptype,
        flag=str(decl.get("flag", "")),
        help=str(decl.get("help", "")),
        min=bounds[0],
        max=bounds[1],
        choices=choices,
        programs=tuple(applies),
    )


def check_run_request(
    *, suites: dict[str, Suite], suite: str, profile: str, params: dict[str, Any]
) -> Suite:
    """Refuse an unknown suite or profile, or params outside the declaration, with ParamError."""
    found = suites.get(suite)
    if found is None:
        known = ", ".join(sorted(suites)) or "none"
        raise ParamError(f"Unknown suite {suite!r}; known suites: {known}.")
    if profile not in found.profiles:
        raise ParamError(
            f"Suite {suite!r} has no profile {profile!r}; "
            f"its profiles are: {', '.join(found.profiles)}."
        )
    for pname, value in params.items():
        if pname in AGENT_FACTORS or pname == "target_dir":
            check_agent_factor(pname, value)
            continue
        decl = found.params.get(pname)
        if decl is None:
            declared = ", ".join(sorted(found.params)) or "none"
            raise ParamError(
                f"Suite {suite!r} does not declare a parameter {pname!r}; "
                f"its parameters are: {declared}."
            )
        check_param(decl, value)
    return found


# Factors every suite takes because the agent applies them itself (docs/suites.md).
# The agent checks them again: target_dir against its own allow-list, pin_cpu
# against the CPUs it may use.
AGENT_FACTORS: dict[str, ParamDecl] = {
    "write_cache": ParamDecl(
        "write_cache",
        "enum",
        "",
        "Disk write cache during the run.",
        None,
        None,
        ("on", "off", "unchanged"),
    ),
    "pin_cpu": ParamDecl("pin_cpu", "integer", "", "Pin the program to this CPU.", 0, 4095),
    "drop_caches": ParamDecl("drop_caches", "boolean", "", "Drop the page cache first."),
    "timeout": ParamDecl(
        "timeout", "number", "", "Stop the job after this many seconds.", 1, 604800
    ),
}


def check_agent_factor(name: str, value: Any) -> None:
    if name == "target_dir":
        parts = value.split("/") if isinstance(value, str) else []
        if not isinstance(value, str) or not TARGET_DIR.match(value) or ".." in parts:
            raise ParamError(
                f"Parameter 'target_dir' must be an absolute path of plain characters "
                f"without '..', not {value!r}."
            )
        return
    check_param(AGENT_FACTORS[name], value)


def check_param(decl: ParamDecl, value: Any) -> None:
    name = decl.name
    if decl.type == "boolean":
        if not isinstance(value, bool):
            raise ParamError(f"Parameter {name!r} must be true or false, not {value!r}.")
        return
    if decl.type == "enum":
        if not isinstance(value, str) or value not in decl.choices:
            raise ParamError(
                f"Parameter {name!r} must be one of {', '.join(decl.choices)}, not {value!r}."
            )
        return
    if decl.type == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParamError(f"Parameter {name!r} must be an integer, not {value!r}.")
    elif isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ParamError(f"Parameter {name!r} must be a finite number, not {value!r}.")
    if decl.min is not None and value < decl.min:
        raise ParamError(f"Parameter {name!r} is {value}, below its minimum {decl.min}.")
    if decl.max is not None and value > decl.max:
        raise ParamError(f"Parameter {name!r} is {value}, above its maximum {decl.max}.")


def coerce_form_value(decl: ParamDecl, raw: str) -> Any:
    """Turn an HTML form field into the JSON value check_param expects; ParamError if it can't."""
    text = raw.strip()
    if decl.type == "boolean":
        return text.lower() in ("1", "true", "on", "yes")
    if decl.type == "enum":
        return text
    try:
        if decl.type == "integer":
            return int(text)
        return float(text)
    except ValueError:
        kind = "an integer" if decl.type == "integer" else "a number"
        raise ParamError(f"Parameter {decl.name!r} must be {kind}, not {text!r}.") from None
