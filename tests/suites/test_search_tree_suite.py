"""The search-tree suite's shared parameters (durability, tree, procs) reach all its programs
through the agent's local mode, and every result says what ran (docs/trees.md, "The suite").

The agent passes every parameter to every program; each program maps it onto its own mechanism
or, where it does not apply, measures nothing and says so on stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
from xaclab_contracts.files import RESULT_SCHEMA

from tests.conftest import TOP, VENV_BIN

SCHEMA = json.loads(RESULT_SCHEMA.read_text())
SKIPPED = "measures nothing here"


def bench(tmp_path: Path, *params: str) -> tuple[list[dict[str, Any]], str]:
    env = dict(
        os.environ,
        XACLAB_AGENT_STATE_DIR=str(tmp_path / "state"),
        XACLAB_AGENT_WORK_DIR=str(tmp_path / "work"),
        XACLAB_AGENT_BIN_DIR=str(TOP / "libxac" / "bin"),
    )
    argv = [str(VENV_BIN / "xaclab-agent"), "bench", "--suite", "search-tree", "--profile", "quick"]
    for param in params:
        argv += ["--param", param]
    run = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    results = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for result in results:
        errors = sorted(validator.iter_errors(result), key=str)
        assert not errors, errors[0].message
        # Every result names what ran, so the report and comparisons can match rows.
        assert {"durability", "mode", "procs", "count"} <= set(result["params"]), result
        if result["sut"] == "libxac":
            assert result["params"]["tree"] in ("btree", "cobtree")
            assert isinstance(result["params"]["advisory"], bool)
            if result["params"]["version"] == "transactional":
                # LIBXAC's memory regime, recorded like a baseline's cache size.
                assert result["params"]["keep_pages"] is True, result
                assert result["params"]["working_mib"] == 256, result
                # userfaultfd where the kernel has it, else mprotect.
                assert result["params"]["write_protect"] in ("uffd", "mprotect"), result
                # page-table entries where the kernel has minor faults, else mprotect.
                assert result["params"]["access_control"] in ("pte", "mprotect"), result
        else:
            assert "tree" not in result["params"] and "advisory" not in result["params"]
    return results, run.stderr


def variants(results: list[dict[str, Any]]) -> set[tuple[Any, ...]]:
    """(sut, tree, advisory, mode) of each result: which system ran and how."""
    return {
        (r["sut"], r["params"].get("tree"), r["params"].get("advisory"), r["params"]["mode"]) for r in results
    }


# The other systems of a nondurable run that several processes can share; Berkeley DB's two
# nondurable settings of the thesis (C.6) are told apart by mode.
NONDURABLE_SHARED_BASELINES = {
    ("bdb", None, None, "not_durable"),
    ("bdb", None, None, "nosync"),
    ("lmdb", None, None, "nosync"),
    ("sqlite", None, None, "wal_off"),
}


def test_nondurable_multiprocess_run_of_every_system(tmp_path: Path) -> None:
    results, stderr = bench(
        tmp_path, "durability=nondurable", "tree=all", "procs=2", "count=400", "repetitions=2"
    )
    throughput = [r for r in results if r["benchmark"] == "insert" and r["metric"] == "throughput"]
    assert variants(throughput) == {
        ("libxac", "btree", False, "nondurable"),
        ("libxac", "btree", True, "nondurable"),
        ("libxac", "cobtree", False, "nondurable"),
        *NONDURABLE_SHARED_BASELINES,
    }
    assert {r["params"]["durability"] for r in results} == {"nondurable"}
    # PMDK and RocksDB allow one process per store: they say so and measure nothing.
    assert "pmemobj_insert: PMDK lets one process open a pool at a time" in stderr
    assert "rocksdb_insert: RocksDB lets one process open a database at a time" in stderr
    assert {r["params"]["procs"] for r in results} == {2}
    # tree_blocks runs the serial trees, which have one process: it measured nothing.
    assert not [r for r in results if r["params"].get("version") == "serial"]
    assert "tree_blocks: --procs above 1 needs the transactional version" in stderr
    # Aborts: one count per process per repetition, for each LIBXAC tree.
    aborts = [r for r in results if r["metric"] == "aborts"]
    assert variants(aborts) == {v for v in variants(throughput) if v[0] == "libxac"}
    assert len(aborts) == 3
    for r in aborts:
        assert r["unit"] == "count" and len(r["samples"]) == 2 * 2
        assert all(s >= 0 and s == int(s) for s in r["samples"])
    assert not [r for r in results if r["sut"] != "libxac" and r["metric"] == "aborts"]
    # What contention cost, per process and repetition: retries per commit (200 inserts each),
    # the longest run of retries and the escalations are counts of those aborts, and the
    # conflict aborts by kind of page add up to the retries (docs/trees.md).
    kinds = {
        "btree": {"header", "allocator", "free", "root", "inner", "leaf"},
        "cobtree": {"header", "allocator", "free", "heap", "segments", "index"},
    }
    cpus = len(os.sched_getaffinity(0))
    for r in aborts:
        same = {
            m["metric"]: m["samples"]
            for m in results
            if m["sut"] == "libxac" and variants([m]) == variants([r]) and m["benchmark"] == r["benchmark"]
        }
        tree = r["params"]["tree"]
        named = {k.removeprefix("conflict_aborts_") for k in same if k.startswith("conflict_aborts_")}
        assert named == kinds[tree]
        assert {
            "retries_per_commit",
            "retries_max",
            "aborted_time",
            "wait_time",
            "escalations",
            "faults_per_commit",
            "page_copies_per_commit",
            "new_pages_per_commit",
        } <= set(same)
        # Admission defaults to one place more than the CPUs for nondurable writers (twice the
        # CPUs for durable ones), in turns of 250 us; progress: no insert retried more than
        # escalate_after times.
        durable = r["params"]["durability"] == "durable"
        assert r["params"]["writers"] == (2 * cpus if durable else cpus + 1)
        assert r["params"]["turn_us"] == 250 and r["params"]["escalate_after"] == 8
        # A process on one CPU does not spin on the commit lock (its holder could not run).
        assert r["params"]["lock_spin_us"] == (50 if cpus > 1 else 0)
        assert r["params"]["handoff_us"] == 100
        for i, n in enumerate(r["samples"]):
            conflicts = sum(same[f"conflict_aborts_{k}"][i] for k in kinds[tree])
            assert abs(same["retries_per_commit"][i] * 200 - conflicts) < 0.5, (same, i)
            assert conflicts <= n and same["retries_max"][i] <= min(conflicts, 8)
            assert same["escalations"][i] <= n and same["aborted_time"][i] >= 0 <= same["wait_time"][i]
            # A process's first inserts copy the pages they read.  Without advisory calls every
            # access is a fault, every insert writes a page, and a fault copies one page at
            # most; the advisory calls grant (and copy) without faulting.
            copies, faults = same["page_copies_per_commit"][i], same["faults_per_commit"][i]
            assert copies > 0 and faults >= 0, (same, i)
            # Some of a process's copies go into pages its memory did not have: at least its
            # first copies, at most all of them.
            assert 0 < same["new_pages_per_commit"][i] <= copies, (same, i)
            if not r["params"]["advisory"]:
                assert 1 <= faults and copies <= faults, (same, i)
    # No log is written under DB_TXN_NOT_DURABLE; DB_TXN_NOSYNC still logs.
    log = {
        r["params"]["mode"]: r["samples"]
        for r in results
        if r["sut"] == "bdb" and r["metric"] == "log_bytes_per_insert"
    }
    assert max(log["not_durable"]) == 0 and min(log["nosync"]) > 0


def test_one_durable_libxac_tree_runs_alone(tmp_path: Path) -> None:
    results, stderr = bench(tmp_path, "durability=durable", "tree=cobtree", "count=300", "repetitions=1")
    assert variants(results) == {("libxac", "cobtree", False, "durable")}
    assert {r["params"]["durability"] for r in results} == {"durable"}
    metrics = {r["metric"] for r in results}
    assert {"throughput", "aborts", "log_bytes_per_insert", "log_syncs_per_insert"} <= metrics
    syncs = next(r for r in results if r["metric"] == "log_syncs_per_insert")
    assert syncs["unit"] == "ratio" and 0 < syncs["samples"][0] <= 1.5
    # The baselines never run under one LIBXAC tree's name, and say so.
    assert "bdb_insert: --tree cobtree selects one LIBXAC tree" in stderr
    assert "lmdb_insert: --tree cobtree selects one LIBXAC tree" in stderr
    assert "sqlite_insert: --tree cobtree selects one LIBXAC tree" in stderr
    # The five other systems and the serial tree_blocks.
    assert stderr.count(SKIPPED) == 6


def test_a_run_without_durability_runs_every_system_nondurable(tmp_path: Path) -> None:
    """The suite's default (contracts/suites/search-tree.json): the programs' own defaults
    differ, and a run of each at its own would have nothing to compare."""
    results, stderr = bench(tmp_path, "count=300", "repetitions=1", "op=insert")
    throughput = [
        r
        for r in results
        if r["benchmark"] == "insert"
        and r["metric"] == "throughput"
        and r["params"].get("version") != "serial"
    ]
    assert variants(throughput) == {
        ("libxac", "btree", False, "nondurable"),
        *NONDURABLE_SHARED_BASELINES,
        ("rocksdb", None, None, "nosync"),
    }
    assert {r["params"]["durability"] for r in results} == {"nondurable"}
    # PMDK has no nondurable mode: it says so and measures nothing.
    assert "pmemobj_insert: pmemobj has no mode of the durability asked for" in stderr
    # The serial trees of tables 5.1/5.2 still run.
    assert {r["params"]["version"] for r in results if r["sut"] == "libxac"} == {
        "transactional",
        "serial",
    }


def test_the_advisory_btree_and_every_system_durable_when_asked(tmp_path: Path) -> None:
    results, stderr = bench(tmp_path, "tree=btree-advisory", "count=300", "repetitions=1")
    assert variants(results) == {("libxac", "btree", True, "nondurable")}
    assert "tree_blocks: --tree btree-advisory needs the transactional version" in stderr

    results, _ = bench(tmp_path, "durability=durable", "count=300", "repetitions=1", "op=insert")
    throughput = [r for r in results if r["metric"] == "throughput"]
    assert variants(throughput) == {
        ("libxac", "btree", False, "durable"),
        ("bdb", None, None, "durable"),
        ("lmdb", None, None, "durable"),
        ("sqlite", None, None, "wal_full"),
        ("pmemobj", None, None, "durable"),
        ("rocksdb", None, None, "durable"),
    }


def test_a_mixed_run_times_every_shared_systems_searches_beside_its_inserts(tmp_path: Path) -> None:
    """op=mixed (docs/trees.md, "Searches beside inserts"): the readers search the loaded keys, one
    read-only transaction each, while the writers insert as many new keys; the program verifies
    every search's value and, in quick mode, both halves of the keys afterwards."""
    results, stderr = bench(
        tmp_path, "op=mixed", "procs=3", "readers=1", "tree=all", "count=400", "repetitions=2"
    )
    rates = [r for r in results if r["metric"] == "search_throughput"]
    assert variants(rates) == {
        ("libxac", "btree", False, "nondurable"),
        ("libxac", "btree", True, "nondurable"),
        ("libxac", "cobtree", False, "nondurable"),
        *NONDURABLE_SHARED_BASELINES,
    }
    assert {r["benchmark"] for r in results} == {"mixed"}
    assert {(r["params"]["procs"], r["params"]["readers"]) for r in results} == {(3, 1)}
    # Two rates instead of one throughput; a rate per repetition, every insert's latency.
    assert not [r for r in results if r["metric"] == "throughput"]
    for rate in rates:
        same = {m["metric"]: m for m in results if variants([m]) == variants([rate])}
        assert len(same["insert_throughput"]["samples"]) == 2 and min(rate["samples"]) > 0
        assert same["insert_throughput"]["unit"] == rate["unit"] == "ops/s"
        assert len(same["insert_latency"]["samples"]) == 2 * 400
        assert 2 <= len(same["search_latency"]["samples"]) <= 2 * 400
        if rate["sut"] != "libxac":
            continue
        # The writers' contention only: one count per writer (2) per repetition.
        assert len(same["aborts"]["samples"]) == 2 * 2
        assert len(same["retries_per_commit"]["samples"]) == 2 * 2
        # One count per reader and repetition.  How many searches a reader gets in while the
        # writers run is the scheduler's, and its first ones fault on pages it never had, so
        # the ratio says nothing here; test_queries_keep_their_pages_across_searches does.
        faults = same["faults_per_search"]["samples"]
        assert len(faults) == 2 and min(faults) >= 0, faults
    # PMDK and RocksDB allow one process per store; the serial trees one process.
    assert "pmemobj_insert: PMDK lets one process open a pool at a time" in stderr
    assert "tree_blocks: --procs above 1 needs the transactional version" in stderr


def test_queries_keep_their_pages_across_searches(tmp_path: Path) -> None:
    """faults_per_search (docs/trees.md): each of 2 processes searches its 200 keys 20 times
    (quick), one read-only transaction each, on a store nobody writes.  A query keeps the pages
    it read valid for the next one, so a process faults on a page once, not on every page of
    every search's path (2 or more per search when each query faulted afresh)."""
    results, _stderr = bench(tmp_path, "op=search", "procs=2", "tree=btree", "count=400", "repetitions=1")
    searches = next(r for r in results if r["metric"] == "throughput")
    assert searches["params"]["passes"] == 20
    faults = next(r for r in results if r["metric"] == "faults_per_search")
    assert faults["sut"] == "libxac" and faults["unit"] == "ratio"
    # One per process; 4,000 searches each, and far fewer faults than searches.
    assert len(faults["samples"]) == 2 and max(faults["samples"]) < 0.5, faults["samples"]
