"""Suite declarations (docs/suites.md) as the server uses them: queueing runs, the run form.

The declarations are parsed by :mod:`xaclab_contracts.suites`, the parser the
agent uses, so the server refuses at queue time every run the agent would
refuse before running it (the agent's machine-only checks aside: its CPUs
and its allowed directories).
"""

from collections.abc import Mapping
from typing import Any

from xaclab_contracts.factors import AGENT_FACTORS, check_job_params
from xaclab_contracts.suites import (
    ParamDecl,
    ParamError,
    Suite,
    SuiteError,
    check_param,
    load_suites,
    parse_suite,
)

__all__ = [
    "ratios",
    "AGENT_FACTORS",
    "ParamDecl",
    "ParamError",
    "Suite",
    "SuiteError",
    "check_param",
    "check_run_request",
    "coerce_form_value",
    "load_suites",
    "parse_suite",
    "profile_rule",
    "profile_rules",
]


def check_run_request(
    *, suites: dict[str, Suite], suite: str, profile: str, params: dict[str, Any]
) -> Suite:
    """Refuse an unknown suite or profile, or params outside the declaration, with ParamError."""
    found = suites.get(suite)
    if found is None:
        known = ", ".join(sorted(suites)) or "none"
        raise ParamError(f"Unknown suite {suite!r}; known suites: {known}.")
    found.profile_args(profile)
    check_job_params(found, params)
    return found


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


def ratios(suites: Mapping[str, Suite], name: str) -> bool:
    """Whether pages compare the systems of suite ``name`` as ratios (docs/suites.md,
    ``system_ratios``); an unknown suite's are."""
    suite = suites.get(name)
    return suite.system_ratios if suite is not None else True


def profile_rule(suite: Suite, profile: str) -> str:
    """What a profile with a repetition rule does, in a sentence for the forms; "" for a
    profile that runs its programs once."""
    best_of = suite.best_of.get(profile)
    if best_of is not None:
        apart = f", {best_of.gap_s:g} s apart" if best_of.gap_s > 0 else ""
        return (
            f"{profile}: each result the best of {best_of.runs} runs{apart} (the lowest median, "
            "or the highest where higher is better), in a series of its own; the profile for "
            "schedules the change detector watches."
        )
    repeat = suite.repeat.get(profile)
    if repeat is not None:
        return (
            f"{profile}: run again until every median is known within "
            f"±{repeat.median_ci_percent:g} % (at most {repeat.max_runs} runs), the samples pooled."
        )
    return ""


def profile_rules(suites: Mapping[str, Suite]) -> list[str]:
    """Each profile's rule (:func:`profile_rule`) once, as the first suite that has it says."""
    found: dict[str, str] = {}
    for suite in suites.values():
        for profile in suite.profiles:
            rule = profile_rule(suite, profile)
            if rule and profile not in found:
                found[profile] = rule
    return [found[p] for p in sorted(found)]
