"""The concurrency suite runs concurrency_test and the seeds-004 record workload, each with the
parameters that apply to it (docs/suites.md, "programs"), through the agent's local mode."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TOP, VENV_BIN

VARIANTS = {"nolock", "coarse", "fine", "libxac"}
# Quick runs report the exact CPU time without its user/sys split (docs/benchmarks-records.md).
QUICK_METRICS = {"wall_time", "cpu_time", "errors", "slots_per_op"}
COUNTS = {"errors", "slots_per_op", "faults_per_op"}


def bench(tmp_path: Path, *params: str) -> list[dict[str, Any]]:
    env = dict(
        os.environ,
        XACLAB_AGENT_STATE_DIR=str(tmp_path / "state"),
        XACLAB_AGENT_WORK_DIR=str(tmp_path / "work"),
        XACLAB_AGENT_BIN_DIR=str(TOP / "libxac" / "bin"),
    )
    argv = [str(VENV_BIN / "xaclab-agent"), "bench", "--suite", "concurrency", "--profile", "quick"]
    for param in params:
        argv += ["--param", param]
    run = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return [json.loads(line) for line in run.stdout.splitlines() if line.strip()]


def test_each_program_gets_its_own_parameters(tmp_path: Path) -> None:
    results = bench(tmp_path, "procs=3", "txns=200", "tests=A", "nrec=400", "repetitions=2", "rounds=2")
    tests = [r for r in results if r["benchmark"] == "concurrency_test"]
    records = [r for r in results if r["benchmark"] == "records"]
    machine = [r for r in results if r["benchmark"] == "cpu_parallel"]
    assert tests and records and len(tests) + len(records) + len(machine) == len(results)
    # The machine's own parallel speedup, measured beside LIBXAC's in the same rounds.
    assert [(r["sut"], r["metric"], r["params"]["test"]) for r in machine] == [("os", "speedup", "A")]
    assert {r["metric"] for r in tests} >= {"speedup", "speedup_over_machine", "aborts_pool_full"}
    # Test A's processes share no page, so no abort is a conflict: each one it reports is a full
    # version pool, counted apart as aborts_pool_full.
    samples = {(r["metric"], r["params"]["procs"]): r["samples"] for r in tests}
    for procs in {r["params"]["procs"] for r in tests}:
        assert samples[("aborts_pool_full", procs)] == samples[("aborts", procs)]
    # rounds reached concurrency_test: one sample per round, for every metric.
    assert {len(r["samples"]) for r in tests + machine} == {2}
    # txns and tests reached concurrency_test; procs reached both.
    assert {r["params"]["test"] for r in tests} == {"A"}
    assert {r["params"]["txns"] for r in tests} == {200}
    assert {r["params"]["procs"] for r in tests} >= {3}
    # nrec and repetitions reached concurrency_records (and not concurrency_test's txns).
    assert {(r["params"]["variant"], r["metric"]) for r in records} == {
        (v, m) for v in VARIANTS for m in QUICK_METRICS
    } | {("libxac", "faults_per_op")}
    for r in records:
        assert (r["params"]["procs"], r["params"]["nrec"]) == (3, 400)
        assert len(r["samples"]) == 2
        assert ("durability" in r["params"]) == (r["sut"] == "libxac")
    errors = {r["params"]["variant"]: r["samples"] for r in records if r["metric"] == "errors"}
    # Locking and transactions lose nothing; three unlocked processes tear the file (APUE:
    # "different errors occurred every time"), which the program reports rather than hides.
    assert errors["coarse"] == errors["fine"] == errors["libxac"] == [0, 0]
    assert max(errors["nolock"]) > 0
    for r in records:
        if r["metric"] not in COUNTS:
            assert all(s >= 0 for s in r["samples"]) and r["unit"] == "s"
    assert all(max(r["samples"]) > 0 for r in records if r["metric"] == "wall_time")


def test_durability_reaches_the_record_workload(tmp_path: Path) -> None:
    results = bench(tmp_path, "durability=durable", "variant=libxac", "tests=A", "txns=100")
    records = [r for r in results if r["benchmark"] == "records"]
    assert {r["params"]["variant"] for r in records} == {"libxac"}
    assert {r["params"]["durability"] for r in records} == {"durable"}
    assert {r["params"]["durability"] for r in results if r["sut"] == "libxac"} == {"durable"}
    # A durable run's speedup measures shared log syncs, not the CPUs: no ratio to the machine.
    tests = {r["metric"] for r in results if r["benchmark"] == "concurrency_test"}
    assert "speedup" in tests and "speedup_over_machine" not in tests
    machine = [r for r in results if r["benchmark"] == "cpu_parallel"]
    assert machine and all(s > 0 for r in machine for s in r["samples"])


def test_full_runs_split_the_cpu_time_into_user_and_sys(tmp_path: Path) -> None:
    """Without --quick the program adds the kernel's user/sys split, which sums to cpu_time."""
    argv = [str(TOP / "libxac/bin/concurrency_records"), "--procs", "2", "--nrec", "100"]
    argv += ["--reps", "2", "--variant", "coarse", "--dir", str(tmp_path)]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    samples = {r["metric"]: r["samples"] for r in map(json.loads, run.stdout.splitlines())}
    assert set(samples) == {"wall_time", "cpu_time", "user_time", "sys_time", "errors", "slots_per_op"}
    for cpu, user, sys in zip(samples["cpu_time"], samples["user_time"], samples["sys_time"], strict=True):
        assert cpu > 0 and cpu == pytest.approx(user + sys, rel=1e-9, abs=1e-6)


def records_counts(tmp_path: Path, variant: str, procs: int, nrec: int) -> dict[str, float]:
    argv = [str(TOP / "libxac/bin/concurrency_records"), "--procs", str(procs), "--nrec", str(nrec)]
    argv += ["--reps", "1", "--variant", variant, "--dir", str(tmp_path)]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    found = {r["metric"]: r["samples"][0] for r in map(json.loads, run.stdout.splitlines())}
    assert found["errors"] == 0
    return found


def test_an_operation_reads_more_slots_when_more_processes_share_the_chains(tmp_path: Path) -> None:
    """The chains hold every process's records: at the same --nrec, four times the processes
    make every chain about four times longer; at the same procs x nrec, the chains and the
    slots an operation reads stay as they were (docs/benchmarks-records.md, "Results")."""
    few = records_counts(tmp_path, "fine", 2, 400)
    same_total = records_counts(tmp_path, "fine", 8, 100)
    more = records_counts(tmp_path, "fine", 8, 400)
    assert more["slots_per_op"] > 2.5 * few["slots_per_op"]
    assert same_total["slots_per_op"] == pytest.approx(few["slots_per_op"], rel=0.2)
    assert "faults_per_op" not in more  # counted by LIBXAC only


def test_libxac_faults_at_least_once_per_operation_and_more_with_longer_chains(tmp_path: Path) -> None:
    """Every transaction of the libxac variant starts without its pages (xSetKeepPages(0)), so
    each operation faults at least on the header page it reads its chain's head from, and once
    more for each further page its chain walk reaches."""
    short = records_counts(tmp_path, "libxac", 2, 100)
    long = records_counts(tmp_path, "libxac", 2, 800)
    assert short["faults_per_op"] >= 1
    assert long["slots_per_op"] > 3 * short["slots_per_op"]
    assert long["faults_per_op"] > 2 * short["faults_per_op"]


def test_keep_pages_reaches_the_record_workload_and_spares_its_faults(tmp_path: Path) -> None:
    """keep_pages=true runs the libxac variant as the library runs by default: a process keeps
    the pages it read readable between its transactions, so a fetch faults only where another
    process committed since; without it every transaction takes its pages afresh, as the thesis
    measured (docs/benchmarks-records.md, "Results")."""
    runs = {}
    for kept in (True, False):
        where = tmp_path / ("kept" if kept else "fresh")
        where.mkdir()
        params = ["variant=libxac", "tests=A", "txns=100", "nrec=200"] + (["keep_pages=true"] if kept else [])
        runs[kept] = [r for r in bench(where, *params) if r["benchmark"] == "records"]
    assert {r["params"].get("keep_pages") for r in runs[True]} == {True}
    assert all("keep_pages" not in r["params"] for r in runs[False])
    faults = {
        kept: next(r["samples"] for r in rs if r["metric"] == "faults_per_op") for kept, rs in runs.items()
    }
    assert max(faults[True]) < min(faults[False]) / 2, faults
    errors = {kept: next(r["samples"] for r in rs if r["metric"] == "errors") for kept, rs in runs.items()}
    assert errors == {True: [0] * 5, False: [0] * 5}
