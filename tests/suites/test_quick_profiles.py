"""Every suite's quick profile, run for real through the agent's local mode.

Each stdout line must be a valid result (contracts/result-format.schema.json)
that belongs to the suite, with the agent's fingerprint attached.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from xaclab_contracts.files import RESULT_SCHEMA, SUITES_DIR

from tests.conftest import TOP, VENV_BIN

SUITES = sorted(p.stem for p in SUITES_DIR.glob("*.json"))
SCHEMA = json.loads(RESULT_SCHEMA.read_text())


def test_every_suite_file_is_found() -> None:
    assert {"page-touch", "storage", "search-tree"} <= set(SUITES)


def _bench(suite: str, profile: str, tmp_path: Path) -> list[dict[str, Any]]:
    """``xaclab-agent bench`` of SUITE's PROFILE on the built programs; its results, each
    checked against the result format and its suite."""
    env = dict(
        os.environ,
        XACLAB_AGENT_STATE_DIR=str(tmp_path / "state"),
        XACLAB_AGENT_WORK_DIR=str(tmp_path / "work"),
        XACLAB_AGENT_BIN_DIR=str(TOP / "libxac" / "bin"),
    )
    run = subprocess.run(
        [str(VENV_BIN / "xaclab-agent"), "bench", "--suite", suite, "--profile", profile],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    assert lines, f"{suite} printed no results"
    validator = jsonschema.Draft202012Validator(SCHEMA)
    results = []
    for line in lines:
        result = json.loads(line)
        errors = sorted(validator.iter_errors(result), key=str)
        assert not errors, f"{suite}: {errors[0].message} in {line[:200]}"
        assert result["suite"] == suite
        assert result["env"]["fingerprint_hash"], "the agent attaches the fingerprint"
        results.append(result)
    return results


@pytest.mark.parametrize("suite", SUITES)
def test_quick_profile_emits_valid_results(suite: str, tmp_path: Path) -> None:
    _bench(suite, "quick", tmp_path)


def test_the_watch_profile_keeps_each_results_best_of_three_real_runs(tmp_path: Path) -> None:
    for result in _bench("page-touch", "watch", tmp_path):
        assert result["params"]["best_of"] == 3
        kept = result["env"]["best_of"]
        assert kept["runs"] == 3 and len(kept["run_medians"]) == 3
        best = (max if result["better"] == "higher" else min)(kept["run_medians"])
        median = statistics.median(result["samples"])
        assert median == pytest.approx(best), "the kept samples are those of the best run"
        assert kept["run_medians"][kept["kept_run"] - 1] == pytest.approx(median)
