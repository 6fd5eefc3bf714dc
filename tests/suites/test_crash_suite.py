"""The crash-consistency suite on every system in its durable modes (docs/crash-consistency.md):
100 crash points of each kind per configuration, and not one acknowledged commit lost.

A loss here is a finding about a system (or about the model): report it with the reproduction
line its program prints; do not lower the bar.  The nondurable modes show the check can see a
loss at all: a power cut takes the commits they never synced.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from xaclab_contracts.files import RESULT_SCHEMA
from xaclab_contracts.suites import load_suite

from tests.conftest import TOP

BIN = TOP / "libxac" / "bin"
SUITE = load_suite("crash-consistency")
VALIDATOR = jsonschema.Draft202012Validator(json.loads(RESULT_SCHEMA.read_text()))
POINTS = 100


def crash(program: str, tmp_path: Path, *args: str) -> tuple[list[dict[str, Any]], str]:
    work = tmp_path / program
    work.mkdir()
    done = subprocess.run(
        [str(BIN / program), "crash", "--tree", "all", "--dir", str(work), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = [json.loads(line) for line in done.stdout.splitlines()]
    for result in results:
        assert not list(VALIDATOR.iter_errors(result)), result
        assert result["suite"] == "crash-consistency"
        assert result["sut"] in SUITE.systems[program]
    return results, done.stderr


def totals(results: list[dict[str, Any]]) -> dict[tuple[str, str, str, str], dict[str, float]]:
    """(kind, mode, tree, advisory) -> metric -> its one sample (recovery_time: the count)."""
    found: dict[tuple[str, str, str, str], dict[str, float]] = {}
    for r in results:
        key = (
            r["benchmark"],
            r["params"]["mode"],
            str(r["params"].get("tree", "")),
            str(r["params"].get("advisory", "")),
        )
        samples = r["samples"]
        found.setdefault(key, {})[r["metric"]] = (
            len(samples) if r["metric"] == "recovery_time" else samples[0]
        )
    return found


@pytest.mark.parametrize("program", SUITE.programs)
def test_every_durable_mode_keeps_every_acknowledged_commit(program: str, tmp_path: Path) -> None:
    results, stderr = crash(program, tmp_path, "--points", str(POINTS))
    found = totals(results)
    (system,) = SUITE.systems[program]
    durable_modes = {m for m, d in SUITE.system_decls[system].modes.items() if d == "durable"}
    assert {mode for _, mode, _, _ in found} == durable_modes
    assert {kind for kind, _, _, _ in found} == {"process-crash", "power-loss"}
    for key, metrics in found.items():
        assert metrics["crash_points"] == POINTS, key
        assert metrics["recovery_time"] == POINTS, key  # one recovery per crash point
        assert metrics["acked_commits"] > POINTS, key  # crash points after commits, not before
        assert metrics["acked_lost"] == 0, (key, stderr[-3000:])
        assert metrics["uncommitted_visible"] == 0, (key, stderr[-3000:])
        assert metrics["invariant_violations"] == 0, (key, stderr[-3000:])
    assert "FINDING" not in stderr


@pytest.mark.parametrize("program", ["lmdb_insert", "sqlite_insert", "rocksdb_insert"])
def test_a_power_cut_takes_what_a_nondurable_mode_never_synced(program: str, tmp_path: Path) -> None:
    results, stderr = crash(
        program, tmp_path, "--points", "60", "--durability", "nondurable", "--kind", "power"
    )
    (((_, mode, _, _), metrics),) = totals(results).items()
    assert SUITE.system_decls[results[0]["sut"]].durability(mode) == "nondurable"
    assert metrics["acked_lost"] > 0
    assert "FINDING: power-loss crash point" in stderr and "Reproduce: " in stderr


def test_a_process_crash_keeps_even_unsynced_commits(tmp_path: Path) -> None:
    # The page cache outlives the process: nothing is lost without a sync.
    results, _ = crash(
        "lmdb_insert", tmp_path, "--points", "40", "--durability", "nondurable", "--kind", "process"
    )
    (((_, mode, _, _), metrics),) = totals(results).items()
    assert mode == "nosync" and metrics["acked_lost"] == 0 and metrics["acked_commits"] > 40
