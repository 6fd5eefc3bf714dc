"""Every param the benchmark programs put into their results has a role its suite declares,
and every result names a system its program declares.

The programs run for real (libxac/bin, built by `make build`), through each suite's
own argument vectors: the quick profile, and runs with the parameters that make
the programs record more (a durable page-touch measures the fdatasync floor; the
search trees record LIBXAC's page mechanisms when they are durable and shared).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from xaclab_contracts.suites import Suite, load_suite

BIN_DIR = Path(__file__).resolve().parents[2] / "libxac" / "bin"
RUNS: list[tuple[str, dict[str, Any]]] = [
    ("page-touch", {}),
    ("page-touch", {"durability": "both", "max_pages": 4, "repetitions": 2}),
    ("storage", {}),
    ("concurrency", {"durability": "durable"}),
    ("concurrency", {"keep_pages": True, "variant": "libxac", "tests": "A"}),
    ("search-tree", {}),
    (
        "search-tree",
        {"tree": "all", "durability": "durable", "procs": 2, "count": 400, "repetitions": 1},
    ),
    ("search-tree", {"op": "mixed", "procs": 3, "count": 400, "repetitions": 1}),
    ("crash-consistency", {"points": 4, "inserts": 6}),
    ("crash-consistency", {"points": 3, "kind": "power", "durability": "nondurable"}),
]


def run_suite(suite: Suite, params: dict[str, Any], work: Path) -> list[tuple[str, dict[str, Any]]]:
    """(program, result) for every line each program of the suite prints."""
    found = []
    for program in suite.programs:
        job_dir = work / program
        job_dir.mkdir(parents=True)
        argv = suite.argv(program, "quick", suite.validate(params), BIN_DIR)
        if suite.dir_flag:
            argv += [suite.dir_flag, str(job_dir)]
        done = subprocess.run(
            argv,
            cwd=job_dir,
            env=dict(os.environ, TMPDIR=str(job_dir)),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, f"{argv}: {done.stderr[-2000:]}"
        found += [(program, json.loads(line)) for line in done.stdout.splitlines() if line]
    return found


def _mode_durability(suite: Suite, result: dict[str, Any]) -> str | None:
    """The durability the result's system declares for its mode; "any" when the result says
    none, None when the mode is not declared."""
    declared = suite.system_decls[result["sut"]].durability(result["params"]["mode"])
    return "any" if declared is not None and "durability" not in result["params"] else declared


@pytest.mark.parametrize(
    ("name", "params"), RUNS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(RUNS)]
)
def test_every_recorded_param_has_a_declared_role(
    name: str, params: dict[str, Any], tmp_path: Path
) -> None:
    assert (BIN_DIR / "page_touch").is_file(), f"build libxac first ({BIN_DIR} is empty)"
    suite = load_suite(name)
    results = run_suite(suite, params, tmp_path)
    assert results, f"{name} printed no results"
    undeclared = sorted(
        {(program, key) for program, r in results for key in r["params"] if suite.role(key) is None}
    )
    assert not undeclared, f"{name}: params its programs record without a declared role"
    foreign = sorted(
        {(program, r["sut"]) for program, r in results if r["sut"] not in suite.systems[program]}
    )
    assert not foreign, f"{name}: systems its programs name but do not declare"
    # A result's mode is one its system declares, with the durability declared for it.
    undeclared_modes = sorted(
        {
            (r["sut"], r["params"]["mode"], r["params"].get("durability"))
            for _, r in results
            if "mode" in r["params"]
            and _mode_durability(suite, r) not in (r["params"].get("durability", "any"), "any")
        }
    )
    assert not undeclared_modes, f"{name}: modes (or their durability) the systems do not declare"
