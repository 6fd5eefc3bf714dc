"""Comparisons through the user API: runs, factors, systems under test, machines; exports."""

import csv
import io
import math
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from tests.conftest import REGISTRATION_TOKEN
from tests.helpers import AGENT, claim, histogram_record, register, result_record, upload
from xaclab_server.services.histogram import BOUND


def _finish_run(client: TestClient, headers: dict[str, str], results: list[dict[str, Any]]) -> None:
    job_id = claim(client, headers).json()["job_id"]
    assert upload(client, headers, job_id, results).status_code == 201
    client.post(f"{AGENT}/jobs/{job_id}/finish", json={"status": "succeeded"}, headers=headers)


def _run(
    client: TestClient, machine_id: int, *, suite: str = "page-touch", **factors: list[Any]
) -> int:
    body = {"machine_ids": [machine_id], "suites": [suite], "factors": factors}
    run_id: int = client.post("/api/v1/matrices", json=body).json()["runs"][0]["run_id"]
    return run_id


def test_two_runs_with_a_real_and_no_difference(client: TestClient) -> None:
    machine_id, headers = register(client)
    a = _run(client, machine_id)
    _finish_run(
        client,
        headers,
        [
            result_record(samples=[10.0 + i / 10 for i in range(30)]),
            result_record(benchmark="flat", samples=[5.0 + (i % 7) / 10 for i in range(30)]),
        ],
    )
    b = _run(client, machine_id)
    _finish_run(
        client,
        headers,
        [
            result_record(samples=[8.0 + i / 10 for i in range(30)]),
            result_record(benchmark="flat", samples=[5.0 + ((i + 3) % 7) / 10 for i in range(30)]),
        ],
    )
    reply = client.get("/api/v1/compare", params={"kind": "runs", "a": a, "b": b})
    assert reply.status_code == 200, reply.text
    out = reply.json()
    pairs = {p["benchmark"]: p for p in out["pairs"]}
    faster = pairs["page_touch"]
    assert faster["significant"] and faster["ratio"] < 1 and faster["ci_high"] < 1
    assert "lower (better)" in faster["verdict"]
    assert pairs["flat"]["verdict"] == "no significant difference"
    assert out["resamples"] == 2000 and out["significant"] == 1
    exported = client.get(
        "/api/v1/compare", params={"kind": "runs", "a": a, "b": b, "format": "csv"}
    )
    assert exported.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    assert {r["benchmark"] for r in rows} == {"page_touch", "flat"}
    page = client.get("/compare", params={"kind": "runs", "a": a, "b": b})
    assert page.status_code == 200 and "no significant difference" in page.text


@pytest.mark.parametrize(("key", "other"), [("write_protect", "uffd"), ("access_control", "pte")])
def test_runs_pair_across_write_protection_mechanisms(
    client: TestClient, key: str, other: str
) -> None:
    """write_protect and access_control say what the kernel allowed, not what was
    asked: results that differ only there still pair, so machines with and without
    userfaultfd compare."""
    machine_id, headers = register(client)
    runs = []
    for mechanism, scale in (("mprotect", 10.0), (other, 5.0)):
        runs.append(_run(client, machine_id))
        record = result_record(
            params={"n": 1, key: mechanism},
            samples=[scale * (1 + i / 1000) for i in range(12)],
        )
        _finish_run(client, headers, [record])
    out = client.get("/api/v1/compare", params={"kind": "runs", "a": runs[0], "b": runs[1]}).json()
    assert len(out["pairs"]) == 1 and out["only_a"] == 0 and out["only_b"] == 0, out
    assert out["pairs"][0]["ratio"] == pytest.approx(0.5)


def test_factor_and_sut_comparisons_inside_one_run(client: TestClient) -> None:
    machine_id, headers = register(client)
    # Berkeley DB results belong to a suite whose programs measure it (the server checks).
    run_id = _run(client, machine_id, suite="search-tree", write_cache=["on", "off"])
    for index in range(2):
        slow = index == 0  # jobs follow the order of the values: write_cache=on first
        job_id = claim(client, headers).json()["job_id"]
        results = [
            result_record(
                suite="search-tree",
                sut=sut,
                params={"n": 1, "cache_mib": 2} if sut == "bdb" else {"n": 1},
                samples=[scale * (2 if slow else 1) * (1 + i / 1000) for i in range(12)],
            )
            for sut, scale in (("libxac", 10.0), ("bdb", 20.0))
        ]
        assert upload(client, headers, job_id, results).status_code == 201
        client.post(f"{AGENT}/jobs/{job_id}/finish", json={"status": "succeeded"}, headers=headers)
    factor = client.get(
        "/api/v1/compare",
        params={"kind": "factor", "factor": "write_cache", "a": "off", "b": "on", "run": run_id},
    ).json()
    assert len(factor["pairs"]) == 2
    assert all(p["ratio"] == pytest.approx(2.0) and p["significant"] for p in factor["pairs"])
    suts = client.get(
        "/api/v1/compare", params={"kind": "sut", "a": "libxac", "b": "bdb", "run": run_id}
    ).json()
    assert len(suts["pairs"]) == 2
    assert all(p["ratio"] == pytest.approx(2.0) for p in suts["pairs"])
    assert "cache_mib" in suts["note"]


def test_sut_comparison_pairs_every_tree_with_every_baseline_mode(client: TestClient) -> None:
    machine_id, headers = register(client)
    body = {"machine_ids": [machine_id], "suites": ["search-tree"], "factors": {}}
    run_id = client.post("/api/v1/matrices", json=body).json()["runs"][0]["run_id"]
    workload = {"count": 1000, "procs": 1, "durability": "nondurable"}
    systems: list[tuple[str, dict[str, Any], float]] = [
        ("libxac", {"tree": "btree", "advisory": False, "version": "transactional"}, 80.0),
        ("libxac", {"tree": "btree", "advisory": True, "version": "transactional"}, 60.0),
        ("libxac", {"tree": "cobtree", "advisory": False, "version": "transactional"}, 90.0),
        ("bdb", {"mode": "not_durable"}, 10.0),
        ("bdb", {"mode": "nosync"}, 20.0),
        ("bdb", {"mode": "cdb", "durability": "durable"}, 5.0),  # another workload
    ]
    results = [
        result_record(
            suite="search-tree",
            benchmark="insert",
            sut=sut,
            metric="time_per_insert",
            params={**workload, **variant},
            samples=[scale * (1 + i / 1000) for i in range(12)],
        )
        for sut, variant, scale in systems
    ]
    _finish_run(client, headers, results)
    suts = client.get(
        "/api/v1/compare", params={"kind": "sut", "a": "libxac", "b": "bdb", "run": run_id}
    ).json()
    pairs = {
        (p["params"]["libxac.tree"], p["params"]["libxac.advisory"], p["params"]["bdb.mode"]): p
        for p in suts["pairs"]
    }
    assert len(suts["pairs"]) == 6  # 3 LIBXAC trees x 2 Berkeley DB modes; cdb ran durable
    assert pairs[("btree", False, "not_durable")]["ratio"] == pytest.approx(10 / 80)
    assert pairs[("cobtree", False, "nosync")]["ratio"] == pytest.approx(20 / 90)
    assert pairs[("btree", True, "nosync")]["ratio"] == pytest.approx(20 / 60)
    assert all(p["params"]["durability"] == "nondurable" for p in suts["pairs"])
    assert suts["only_b"] == 1 and "tree" in suts["note"]


def test_systems_that_ran_no_common_workload_are_told_why(client: TestClient) -> None:
    """A run in which LIBXAC ran nondurable and Berkeley DB durable (as a search-tree run did
    before the suite's default durability) has no pair; the note names the difference."""
    machine_id, headers = register(client)
    body = {"machine_ids": [machine_id], "suites": ["search-tree"], "factors": {}}
    run_id = client.post("/api/v1/matrices", json=body).json()["runs"][0]["run_id"]
    results = [
        result_record(
            suite="search-tree",
            benchmark="insert",
            sut=sut,
            metric="throughput",
            params={"count": 1000, "procs": 1, "durability": durability, "mode": durability},
            samples=[10.0 * (1 + i / 1000) for i in range(12)],
        )
        for sut, durability in (("libxac", "nondurable"), ("bdb", "durable"))
    ]
    _finish_run(client, headers, results)
    suts = client.get(
        "/api/v1/compare", params={"kind": "sut", "a": "bdb", "b": "libxac", "run": run_id}
    ).json()
    assert suts["pairs"] == [] and suts["only_a"] == 1 and suts["only_b"] == 1
    assert suts["note"].startswith(
        "No pair: durability: LIBXAC nondurable, Berkeley DB durable. Matched on the workload"
    )
    # Where they pair, there is nothing to explain.
    alike = client.get(
        "/api/v1/compare", params={"kind": "sut", "a": "libxac", "b": "libxac", "run": run_id}
    ).json()
    assert alike["pairs"] and not alike["note"].startswith("No pair")


def test_two_runs_that_share_no_workload_are_told_why(client: TestClient) -> None:
    """Run 2 searched where run 1 inserted (no common benchmark); run 3 inserted with 2
    processes where run 1 had 1 (no common value of procs)."""
    machine_id, headers = register(client)

    def tree_run(benchmark: str, procs: int) -> int:
        run_id = _run(client, machine_id, suite="search-tree")
        params = {"count": 1000, "procs": procs, "durability": "nondurable", "mode": "nondurable"}
        record = result_record(
            suite="search-tree",
            benchmark=benchmark,
            sut="libxac",
            metric="throughput",
            params=params,
            samples=[10.0 * (1 + i / 1000) for i in range(12)],
        )
        _finish_run(client, headers, [record])
        return run_id

    first, search, wider = tree_run("insert", 1), tree_run("search", 1), tree_run("insert", 2)
    out = client.get("/api/v1/compare", params={"kind": "runs", "a": first, "b": search}).json()
    assert out["pairs"] == []
    assert out["note"].startswith(
        f"No pair: different benchmarks: insert in run {first}, search in run {search}. Both sides"
    )
    out = client.get("/api/v1/compare", params={"kind": "runs", "a": first, "b": wider}).json()
    assert out["note"].startswith(f"No pair: procs: 1 in run {first}, 2 in run {wider}. Both sides")
    page = client.get("/compare", params={"kind": "runs", "a": first, "b": wider})
    assert f"No pair: procs: 1 in run {first}, 2 in run {wider}." in page.text
    # Runs that pair need no such sentence.
    again = tree_run("insert", 2)
    out = client.get("/api/v1/compare", params={"kind": "runs", "a": wider, "b": again}).json()
    assert out["pairs"] and out["note"].startswith("Both sides")


def test_machines_of_different_fingerprints_need_the_cross_machine_flag(client: TestClient) -> None:
    """Machines whose identity fingerprints differ: 409 naming the fields; asked for across
    machines, 200 and every pair carries the fields."""
    ids = []
    for name, model in (("lab-x", "EPYC 7302"), ("lab-y", "Xeon E5-2680")):
        reply = client.post(
            f"{AGENT}/register",
            json={
                "registration_token": REGISTRATION_TOKEN,
                "name": name,
                "fingerprint": {"cpu": {"model": model, "cores": 16}},
            },
        )
        machine_id = reply.json()["machine_id"]
        headers = {"Authorization": f"Bearer {reply.json()['agent_token']}"}
        ids.append(machine_id)
        _run(client, machine_id)
        _finish_run(client, headers, [result_record(samples=[10.0 + i / 10 for i in range(30)])])
    m1, m2 = ids
    query = {"kind": "machines", "a": m1, "b": m2, "suite": "page-touch"}
    reply = client.get("/api/v1/compare", params=query)
    assert reply.status_code == 409
    detail = reply.json()["detail"]
    assert "not comparable" in detail and "lab-x epoch 1" in detail
    assert "cpu.model ('EPYC 7302' against 'Xeon E5-2680')" in detail
    assert "hardware: cpu.model" in detail and "cross_machine=true" in detail
    across = client.get("/api/v1/compare", params={**query, "cross_machine": "true"})
    assert across.status_code == 200, across.text
    out = across.json()
    assert out["cross_machine"] is True and out["pairs"]
    for pair in out["pairs"]:
        assert pair["fingerprint_differences"] == ["cpu.model ('EPYC 7302' against 'Xeon E5-2680')"]
        assert "across machines: cpu.model differ" in pair["verdict"]
        assert (pair["where_a"], pair["where_b"]) == ("lab-x epoch 1", "lab-y epoch 1")
    missing = client.get("/api/v1/compare", params={"kind": "runs", "a": 1, "b": 999999})
    assert missing.status_code == 422


def test_histogram_results_are_compared_on_their_buckets(client: TestClient) -> None:
    """Histograms (more than 100,000 samples) pair with histograms and with raw samples; two
    results for one key on a side merge; the note and the export say the pair is binned."""
    rng = np.random.default_rng(21)
    machine_id, headers = register(client)
    a = _run(client, machine_id)
    slow = [rng.lognormal(math.log(10.0), 0.1, 120_000) for _ in range(2)]
    _finish_run(
        client,
        headers,
        [
            histogram_record(slow[0]),
            histogram_record(slow[1]),
            result_record(benchmark="mixed", samples=list(rng.lognormal(1.0, 0.1, 200))),
            result_record(benchmark="raw", samples=[10.0 + i / 10 for i in range(30)]),
        ],
    )
    b = _run(client, machine_id)
    fast = rng.lognormal(math.log(9.0), 0.1, 150_000)
    _finish_run(
        client,
        headers,
        [
            histogram_record(fast),
            histogram_record(rng.lognormal(1.0, 0.1, 100_001), benchmark="mixed"),
            result_record(benchmark="raw", samples=[8.0 + i / 10 for i in range(30)]),
        ],
    )
    out = client.get("/api/v1/compare", params={"kind": "runs", "a": a, "b": b}).json()
    pairs = {p["benchmark"]: p for p in out["pairs"]}
    binned = pairs["page_touch"]
    assert binned["binned"] and binned["n_a"] == 240_000 and binned["n_b"] == 150_000
    assert binned["significant"] and "lower (better)" in binned["verdict"]
    assert binned["ratio"] == pytest.approx(0.9, rel=0.01)
    pooled = np.concatenate(slow)
    assert abs(binned["stat_a"] - float(np.median(pooled))) <= BOUND * float(np.median(pooled))
    assert pairs["mixed"]["binned"] and pairs["mixed"]["n_a"] == 200
    assert pairs["mixed"]["verdict"] == "no significant difference"
    assert not pairs["raw"]["binned"] and pairs["raw"]["significant"]
    assert "2 of the 3 pairs (binned: true" in out["note"]
    assert "bucket midpoints" in out["note"]
    mean = client.get(
        "/api/v1/compare", params={"kind": "runs", "a": a, "b": b, "statistic": "mean"}
    ).json()
    mean_pair = {p["benchmark"]: p for p in mean["pairs"]}["page_touch"]
    assert mean_pair["stat_b"] == math.fsum(fast.tolist()) / len(fast)
    exported = client.get(
        "/api/v1/compare", params={"kind": "runs", "a": a, "b": b, "format": "csv"}
    )
    rows = {r["benchmark"]: r for r in csv.DictReader(io.StringIO(exported.text))}
    assert rows["page_touch"]["binned"] == "True" and rows["raw"]["binned"] == "False"
    page = client.get("/compare", params={"kind": "runs", "a": a, "b": b})
    assert page.status_code == 200 and "bucket midpoints" in page.text
