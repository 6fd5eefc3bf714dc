"""More than 100,000 samples, from a real program to a comparison, through real parts only.

libxac/bin/storage_timer with --reps 150000 records 150,000 samples per clock,
so result.c prints histograms; the real agent validates them and uploads them
to the real server on a real PostgreSQL, which stores them packed, summarises
them and compares two such runs on their buckets.  The agent reads a copy of
the storage suite whose quick profile runs only storage_timer with that many
repetitions (the suite's own --reps stops at 100,000); the server knows the
suite by name only.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
from xaclab_contracts.files import SUITES_DIR

from tests.conftest import TOP, VENV_BIN, Server, libpq

REPS = 150_000
BOUND = 2.0**-8


def agent_env(server: Server, state: Path, suites: Path) -> dict[str, str]:
    return dict(
        os.environ,
        XACLAB_AGENT_SERVER=server.base,
        XACLAB_AGENT_STATE_DIR=str(state),
        XACLAB_AGENT_BIN_DIR=str(TOP / "libxac" / "bin"),
        XACLAB_AGENT_SUITES_DIR=str(suites),
        XACLAB_REGISTRATION_TOKEN=server.registration_token,
    )


def timer_only_storage_suite(directory: Path) -> Path:
    declaration = json.loads((SUITES_DIR / "storage.json").read_text())
    declaration["programs"] = ["storage_timer"]
    declaration["sut"] = {"storage_timer": declaration["sut"]["storage_timer"]}
    declaration["profiles"]["quick"] = ["--quick", "--reps", str(REPS)]
    directory.mkdir()
    (directory / "storage.json").write_text(json.dumps(declaration))
    return directory


def run_once(server: Server, env: dict[str, str], machine_id: int) -> int:
    created = httpx.post(
        f"{server.base}/api/v1/runs",
        json={"machine_id": machine_id, "suite": "storage", "profile": "quick", "params": {}},
        headers=server.auth,
    )
    assert created.status_code == 201, created.text
    run_id: int = created.json()["run_id"]
    agent = subprocess.run(
        [str(VENV_BIN / "xaclab-agent"), "run", "--once"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert agent.returncode == 0, agent.stderr
    deadline = time.monotonic() + 30
    while True:
        run = httpx.get(f"{server.base}/api/v1/runs/{run_id}").json()
        if run["status"] in ("succeeded", "failed") or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert run["status"] == "succeeded", run
    return run_id


def test_histograms_from_a_real_program_are_stored_summarised_and_compared(
    server: Server, tmp_path: Path
) -> None:
    # The program itself: above 100,000 samples it prints histograms, never raw samples.
    printed = subprocess.run(
        [str(TOP / "libxac" / "bin" / "storage_timer"), "--reps", str(REPS)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = [json.loads(line) for line in printed.stdout.splitlines()]
    assert lines and all("samples" not in r and r["histogram"]["count"] == REPS for r in lines)

    env = agent_env(server, tmp_path / "agent", timer_only_storage_suite(tmp_path / "suites"))
    subprocess.run(
        [str(VENV_BIN / "xaclab-agent"), "register", "--server", server.base, "--name", "e2e-hist"],
        env=env,
        check=True,
        capture_output=True,
    )
    machines = httpx.get(f"{server.base}/api/v1/machines").json()
    machine_id = next(m["id"] for m in machines if m["name"] == "e2e-hist")

    first = run_once(server, env, machine_id)
    results = httpx.get(f"{server.base}/api/v1/runs/{first}/results").json()
    assert {r["params"]["timer"] for r in results} >= {"clock_gettime_monotonic", "gettimeofday"}
    for r in results:
        assert r["n"] == REPS
        assert r["min"] <= r["median"] <= r["p99"] <= r["max"]
        assert r["min"] <= r["mean"] <= r["max"]

    with psycopg.connect(libpq(server.database_url)) as conn:
        stored = conn.execute(
            "SELECT n, min, max, mean, length(samples), length(histogram) FROM results WHERE run_id = %s",
            (first,),
        ).fetchall()
    assert len(stored) == len(results)
    for n, low, high, mean, samples_bytes, histogram_bytes in stored:
        assert n == REPS and samples_bytes == 0
        # Packed buckets: a few hundred bytes to a few KB, where raw samples take 1.2 MB.
        assert 52 < histogram_bytes < REPS * 8 // 100
        assert low <= mean <= high and math.isfinite(mean)

    second = run_once(server, env, machine_id)
    compared = httpx.get(f"{server.base}/api/v1/compare", params={"kind": "runs", "a": first, "b": second})
    assert compared.status_code == 200, compared.text
    out: dict[str, Any] = compared.json()
    assert len(out["pairs"]) == len(results)
    assert all(p["binned"] and p["n_a"] == p["n_b"] == REPS for p in out["pairs"])
    assert "bucket midpoints" in out["note"]
