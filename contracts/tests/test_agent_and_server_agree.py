"""The agent and the server, each through its own entry points, now give the same verdicts.

Before xaclab_contracts each parsed the suite files with its own strictness:
the server loaded a suite whose enum choices the agent refused, and queued
runs of it that the agent then rejected.  Here the server's queue check
(services/suites.check_run_request) and the agent's job check (factors, then
the suite's declaration) are asked the same questions, and so are their
result checks.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from records import histogram_line, result_line
from xaclab_agent import config as agent_config
from xaclab_agent.errors import ConfigError, ResultError
from xaclab_agent.factors import split_factors
from xaclab_agent.fingerprint import collect_fingerprint
from xaclab_agent.results import parse_result_line
from xaclab_server.models import Job
from xaclab_server.services import results as server_results
from xaclab_server.services import suites as server_suites

from xaclab_contracts.files import SUITES_DIR
from xaclab_contracts.fingerprint import fingerprint_hash
from xaclab_contracts.secret_env import SecretFileError, secret_from_env
from xaclab_contracts.suites import ParamError, SuiteError, load_suite, load_suites

HOSTILE = ["; rm -rf /", "$(id)", "`id`", "../../etc/passwd", "-rf", "", "a b", "nondurable\n"]


def job_params(suite: str) -> list[dict[str, Any]]:
    """Valid and invalid params for every declared parameter of ``suite``, and the factors."""
    cases: list[dict[str, Any]] = [{}, {"colour": "blue"}, {"write_cache": "off"}]
    cases += [{"write_cache": "maybe"}, {"drop_caches": 1}, {"timeout": 0}, {"pin_cpu": True}]
    cases += [{"target_dir": "relative"}, {"target_dir": "/srv/../etc"}]
    for name, decl in load_suite(suite).params.items():
        if decl.type == "enum":
            cases += [{name: choice} for choice in decl.choices]
            cases += [{name: value} for value in HOSTILE]
            cases += [{name: 1}, {name: [decl.choices[0]]}]
        elif decl.type == "boolean":
            cases += [{name: True}, {name: False}, {name: "true"}, {name: 1}]
        else:
            low = decl.min if decl.min is not None else 0
            high = decl.max if decl.max is not None else 10**6
            cases += [{name: int(low)}, {name: int(high)}, {name: int(low) - 1}]
            cases += [{name: int(high) + 1}, {name: str(int(low))}, {name: True}]
            cases += [{name: math.nan}, {name: float(low) + 0.5}]
    return cases


def server_verdict(suite: str, params: dict[str, Any]) -> bool:
    try:
        server_suites.check_run_request(
            suites=load_suites(), suite=suite, profile="quick", params=params
        )
    except ParamError:
        return False
    return True


def agent_verdict(suite: str, params: dict[str, Any], work: Path) -> bool:
    try:
        _factors, rest = split_factors(params, allowed_dirs=(), default_dir=work)
        declared = load_suite(suite)
        declared.validate(rest)
        declared.profile_args("quick")
    except SuiteError:
        return False
    return True


@pytest.mark.parametrize("suite", sorted(p.stem for p in SUITES_DIR.glob("*.json")))
def test_the_server_queues_exactly_the_jobs_the_agent_runs(suite: str, tmp_path: Path) -> None:
    disagree = [
        params
        for params in job_params(suite)
        if server_verdict(suite, params) != agent_verdict(suite, params, tmp_path)
    ]
    assert not disagree
    assert not server_verdict(suite, {next(iter(load_suite(suite).params)): "; rm -rf /"})


def test_a_suite_file_with_an_unsafe_choice_is_refused_by_both(tmp_path: Path) -> None:
    """The server used to load this file and queue mode="fast mode"; the agent refused it."""
    declaration = json.loads((SUITES_DIR / "page-touch.json").read_text())
    declaration["params"]["durability"]["choices"].append("fast mode")
    (tmp_path / "page-touch.json").write_text(json.dumps(declaration))
    with pytest.raises(SuiteError) as on_the_server:
        server_suites.load_suites(tmp_path)
    with pytest.raises(SuiteError) as on_the_agent:
        load_suite("page-touch", tmp_path)
    assert str(on_the_server.value) == str(on_the_agent.value)
    assert "at params/durability/choices/3: 'fast mode' does not match" in str(on_the_agent.value)


def _line(**changes: Any) -> dict[str, Any]:
    storage = {"suite": "storage", "benchmark": "timer", "sut": "os", "params": {"timer": "rdtsc"}}
    return result_line(**{**storage, **changes})


def _histogram(**changes: Any) -> dict[str, Any]:
    return histogram_line(changes, suite="storage", benchmark="timer", sut="os", params={})


@pytest.mark.parametrize(
    ("line", "valid"),
    [
        (_line(), True),
        (_histogram(), True),
        (_line(samples=[1.0, math.nan]), False),
        (_line(samples=[True]), False),
        (_line(params={"timer": "a\x00b"}), False),
        (_line(sut="Os"), False),
        (_histogram(count=100_002), False),
        (_histogram(min=0.5), False),
        (_histogram(sum=10**400), False),
        ({**_histogram(), "samples": [1.0]}, False),
    ],
)
def test_a_line_the_agent_refuses_the_server_refuses(line: dict[str, Any], valid: bool) -> None:
    try:
        parse_result_line(json.dumps(line))
        agent_ok = True
    except ResultError:
        agent_ok = False
    job = cast(Job, SimpleNamespace(id=1, suite="storage"))
    validator = server_results.load_validator(suites=load_suites())
    try:
        server_results.check_results(validator=validator, results=[line], job=job)
        server_ok = True
    except server_results.ResultError:
        server_ok = False
    assert agent_ok == server_ok == valid


def test_the_agents_fingerprint_hash_is_the_one_the_server_computes(tmp_path: Path) -> None:
    fingerprint = collect_fingerprint(bin_dir=None, work_dir=tmp_path)
    unhashed = {k: v for k, v in fingerprint.items() if k != "fingerprint_hash"}
    assert fingerprint["fingerprint_hash"] == fingerprint_hash(unhashed)


def test_secrets_are_refused_alike(tmp_path: Path) -> None:
    for env in ({"X": "a", "X_FILE": str(tmp_path)}, {"X_FILE": str(tmp_path / "nope")}):
        with pytest.raises(SecretFileError) as on_the_server:
            secret_from_env("X", env)
        with pytest.raises(ConfigError) as on_the_agent:
            agent_config.secret_from_env("X", env)
        assert str(on_the_agent.value) == str(on_the_server.value)
