"""Validity flags end to end: uploaded as an agent sends them, judged at ingest, and shown or
refused by every page, export and comparison (docs/validity.md).

Results that are noisy, kernel-only, too short, too variable and from a changed machine go
in through the agent API, on SQLite and PostgreSQL.
"""

import csv
import io
import json
import re
from typing import Any

from fastapi.testclient import TestClient

from tests.helpers import result_record
from tests.reproduction_helpers import register_machine, store_results
from tests.validity_helpers import FINGERPRINT, env, fingerprint, steady, write_cache

NEW_KERNEL = {"release": "6.12.9-amd64"}


def _results(client: TestClient, run_id: int) -> dict[str, dict[str, Any]]:
    reply = client.get(f"/api/v1/runs/{run_id}/results")
    assert reply.status_code == 200, reply.text
    return {r["benchmark"]: r for r in reply.json()}


def _flagged_run(client: TestClient) -> tuple[int, int]:
    """One run with a clean result and one result for each flag."""
    machine_id, agent = register_machine(client, "lab-ssd", FINGERPRINT)
    records = [
        result_record(benchmark="clean", samples=steady(10.0), env=env()),
        result_record(benchmark="busy", samples=steady(10.0), env=env(noisy=True)),
        result_record(
            benchmark="kernel_only",
            params={"n": 1, "write_cache": "off"},
            samples=steady(10.0),
            env=env(cache=write_cache("off", "off", backend="kernel", disk="vda")),
        ),
        result_record(benchmark="short", samples=[10.0, 10.1, 9.9], env=env()),
        result_record(
            benchmark="spread", samples=[4.0, 13.0, 7.0, 20.0, 9.0, 15.0, 5.0, 11.0], env=env()
        ),
        result_record(
            benchmark="changed", samples=steady(10.0), env=env(base=fingerprint(kernel=NEW_KERNEL))
        ),
        result_record(benchmark="bare", samples=steady(10.0)),
    ]
    return machine_id, store_results(client, machine_id, agent, "page-touch", records)


def test_every_flag_is_judged_at_ingest_and_shown_on_the_run_page_and_exports(
    client: TestClient,
) -> None:
    _machine, run_id = _flagged_run(client)
    results = _results(client, run_id)
    flags = {name: set(r["flags"]) for name, r in results.items()}
    assert flags == {
        "clean": set(),
        "busy": {"noisy"},
        "kernel_only": {"kernel_only_write_cache"},
        "short": {"too_few_samples"},
        "spread": {"high_variation"},
        "changed": {"fingerprint_differs"},
        "bare": {"fingerprint_differs"},
    }
    assert (
        "1-minute load 3.2 before, 0.05 after against the threshold 1"
        in results["busy"]["flags"]["noisy"]
    )
    assert (
        "kernel's view of vda (kernel flushes off; device cache unchanged)"
        in results["kernel_only"]["flags"]["kernel_only_write_cache"]
    )
    assert results["kernel_only"]["write_cache"] == "kernel-off"
    assert results["clean"]["write_cache"] == "on"  # read from the drive by hdparm
    assert results["short"]["flags"]["too_few_samples"].startswith("3 samples")
    assert "coefficient of variation" in results["spread"]["flags"]["high_variation"]
    assert (
        "kernel.release ('6.1.0-18-amd64' against '6.12.9-amd64')"
        in results["changed"]["flags"]["fingerprint_differs"]
    )
    assert "carries no fingerprint" in results["bare"]["flags"]["fingerprint_differs"]
    clean = results["clean"]
    assert clean["median_ci_low"] <= clean["median"] <= clean["median_ci_high"]
    assert 0 < clean["median_ci_percent"] < 1.5 and clean["detectable"] > clean["median_ci_percent"]
    assert results["short"]["median_ci_low"] is None and results["short"]["detectable"] is None

    exported = client.get(f"/api/v1/runs/{run_id}/results", params={"format": "csv"})
    assert exported.status_code == 200 and exported.headers["content-type"].startswith("text/csv")
    rows = {r["benchmark"]: r for r in csv.DictReader(io.StringIO(exported.text))}
    assert json.loads(rows["busy"]["flags"]).keys() == {"noisy"}
    assert json.loads(rows["clean"]["flags"]) == {}
    assert rows["kernel_only"]["write_cache"] == "kernel-off"

    sections = client.get(f"/api/v1/runs/{run_id}/charts").json()["sections"]
    # One result per benchmark: single values, each with its flags beside it.
    shown = {v["benchmark"]: v["flags"] for s in sections for v in s["single_values"]}
    assert {name: set(found) for name, found in shown.items()} == flags

    page = client.get(f"/runs/{run_id}")
    assert page.status_code == 200
    assert "6 of 7 results are flagged or not judged" in page.text
    for flag in ("noisy", "kernel_only_write_cache", "too_few_samples", "high_variation"):
        assert f'data-flag="{flag}"' in page.text
    assert "kernel flushes off; device cache unchanged" in page.text


def test_a_pair_with_a_flagged_side_is_in_doubt_never_significant(client: TestClient) -> None:
    machine_id, agent = register_machine(client, "lab-ssd", FINGERPRINT)
    a = store_results(
        client,
        machine_id,
        agent,
        "page-touch",
        [
            result_record(samples=steady(10.0), env=env()),
            result_record(benchmark="other", samples=steady(5.0), env=env()),
        ],
    )
    b = store_results(
        client,
        machine_id,
        agent,
        "page-touch",
        [
            result_record(samples=steady(8.0), env=env(noisy=True)),
            result_record(benchmark="other", samples=steady(4.0), env=env()),
        ],
    )
    reply = client.get("/api/v1/compare", params={"kind": "runs", "a": a, "b": b})
    assert reply.status_code == 200, reply.text
    out = reply.json()
    pairs = {p["benchmark"]: p for p in out["pairs"]}
    doubtful, plain = pairs["page_touch"], pairs["other"]
    assert doubtful["in_doubt"] and not doubtful["significant"]
    assert doubtful["verdict"].startswith("in doubt (B is 20.0% lower (better), q = ")
    assert doubtful["verdict"].endswith("): B: noisy machine")
    assert doubtful["flags_b"].keys() == {"noisy"} and doubtful["flags_a"] == {}
    assert plain["significant"] and not plain["in_doubt"]
    assert plain["q_value"] >= plain["p_value"]
    assert plain["detectable"] is not None and plain["detectable"] < 5
    assert (out["significant"], out["in_doubt"]) == (1, 1)
    assert "Both sides ran on lab-ssd epoch 1." in out["note"]

    exported = client.get(
        "/api/v1/compare", params={"kind": "runs", "a": a, "b": b, "format": "csv"}
    )
    rows = {r["benchmark"]: r for r in csv.DictReader(io.StringIO(exported.text))}
    assert json.loads(rows["page_touch"]["flags_b"]).keys() == {"noisy"}
    assert rows["page_touch"]["in_doubt"] == "True" and rows["page_touch"]["significant"] == "False"
    assert float(rows["other"]["q_value"]) < 0.05

    page = client.get("/compare", params={"kind": "runs", "a": a, "b": b})
    assert page.status_code == 200
    assert "1 significantly different,\n    1 in doubt" in page.text
    assert 'data-flag="noisy">B: noisy machine' in page.text


def test_a_changed_machine_starts_an_epoch_and_is_never_mixed_silently(
    client: TestClient,
) -> None:
    machine_id, agent = register_machine(client, "lab-ssd", FINGERPRINT)
    old = store_results(
        client, machine_id, agent, "page-touch", [result_record(samples=steady(10.0), env=env())]
    )
    again_id, agent = register_machine(client, "lab-ssd", FINGERPRINT)
    assert again_id == machine_id
    assert client.get("/api/v1/machines").json()[0]["epoch"] == 1, "same fingerprint: same epoch"
    upgraded = fingerprint(kernel=NEW_KERNEL)
    _same, agent = register_machine(client, "lab-ssd", upgraded)
    assert client.get("/api/v1/machines").json()[0]["epoch"] == 2
    new = store_results(
        client,
        machine_id,
        agent,
        "page-touch",
        [result_record(samples=steady(9.0), env=env(base=upgraded))],
    )
    assert [r["epoch"] for r in _results(client, old).values()] == [1]
    assert [r["epoch"] for r in _results(client, new).values()] == [2]
    assert all(not r["flags"] for r in _results(client, new).values())

    epochs = client.get(f"/api/v1/machines/{machine_id}/epochs").json()
    assert [(e["epoch"], e["results"]) for e in epochs] == [(1, 1), (2, 1)]
    assert epochs[1]["changed"] == ["kernel.release ('6.1.0-18-amd64' against '6.12.9-amd64')"]

    query = {"kind": "runs", "a": old, "b": new}
    refused = client.get("/api/v1/compare", params=query)
    assert refused.status_code == 409
    detail = refused.json()["detail"]
    assert f"run {old} is lab-ssd epoch 1; run {new} is lab-ssd epoch 2" in detail
    assert "kernel.release ('6.1.0-18-amd64' against '6.12.9-amd64')" in detail
    page = client.get("/compare", params=query)
    assert page.status_code == 409 and "not comparable" in page.text
    across = client.get("/api/v1/compare", params={**query, "cross_machine": "true"})
    assert across.status_code == 200, across.text
    (pair,) = across.json()["pairs"]
    assert pair["fingerprint_differences"] == [
        "kernel.release ('6.1.0-18-amd64' against '6.12.9-amd64')"
    ]
    assert (pair["where_a"], pair["where_b"]) == ("lab-ssd epoch 1", "lab-ssd epoch 2")
    assert "across machines: kernel.release differ" in pair["verdict"]

    report = client.get(f"/api/v1/machines/{machine_id}/reproduction").json()
    assert report["machine"]["epoch"] == 2
    page = client.get("/reproduction", params={"machine_id": machine_id})
    assert "epoch 2\n      (only results of this epoch are used" in page.text
    machines = client.get("/machines")
    assert f'href="/api/v1/machines/{machine_id}/epochs"' in machines.text


def test_runs_whose_results_carry_other_fingerprints_are_refused_within_one_epoch(
    client: TestClient,
) -> None:
    """An agent restarted on a new kernel without registering again: same epoch, but its
    results' own fingerprints differ, so the runs are not compared without the flag."""
    machine_id, agent = register_machine(client, "lab-ssd", FINGERPRINT)
    old = store_results(
        client, machine_id, agent, "page-touch", [result_record(samples=steady(10.0), env=env())]
    )
    upgraded = env(base=fingerprint(kernel=NEW_KERNEL))
    new = store_results(
        client, machine_id, agent, "page-touch", [result_record(samples=steady(9.0), env=upgraded)]
    )
    assert [r["epoch"] for r in _results(client, new).values()] == [1]
    query = {"kind": "runs", "a": old, "b": new}
    refused = client.get("/api/v1/compare", params=query)
    assert refused.status_code == 409
    assert "kernel.release ('6.1.0-18-amd64' against '6.12.9-amd64')" in refused.json()["detail"]
    across = client.get("/api/v1/compare", params={**query, "cross_machine": "true"}).json()
    (pair,) = across["pairs"]
    assert pair["fingerprint_differences"] == [
        "kernel.release ('6.1.0-18-amd64' against '6.12.9-amd64')"
    ]
    assert pair["in_doubt"] and pair["flags_b"].keys() == {"fingerprint_differs"}
    assert "identity fingerprints differ in kernel.release" in across["note"]


def _fsync(samples: list[float], cache: dict[str, Any]) -> dict[str, Any]:
    return result_record(
        benchmark="msync_fsync",
        sut="os",
        metric="fsync_time",
        unit="us",
        params={"pages": 10000, "write_cache": cache["state"]},
        samples=samples,
        env=env(cache=cache),
    )


def test_kernel_only_write_cache_never_fills_the_thesis_write_cache_off_tables(
    client: TestClient,
) -> None:
    machine_id, agent = register_machine(client, "lab-ssd", FINGERPRINT)
    kernel_off = write_cache("off", "off", backend="kernel", disk="vda")
    store_results(
        client,
        machine_id,
        agent,
        "storage",
        [_fsync(steady(800.0), kernel_off)],
        params={"write_cache": "off"},
    )

    def fsync_row() -> dict[str, Any]:
        body = client.get(f"/api/v1/machines/{machine_id}/reproduction").json()
        table = next(t for t in body["tables"] if t["table"] == "4.8")
        row: dict[str, Any] = next(
            r
            for r in table["rows"]
            if r["column"] == "mean" and r["identity"].get("operation") == "fsync"
        )
        return row

    row = fsync_row()
    # After the run, the row says why this machine cannot fill it: the disk, its backend, the
    # run and the setting it ran under, and what would give it a value.
    assert row["status"] == "unavailable" and row["lab"] is None
    assert row["missing"].startswith("cannot be measured on this machine: ")
    assert "write cache of vda (kernel backend)" in row["missing"]
    assert "ran with write_cache=kernel-off, not with the drive's own cache off" in row["missing"]
    assert "ATA, SCSI or NVMe" in row["missing"]
    assert row["kernel_only_label"] == "kernel flushes off; device cache unchanged"
    assert abs(row["kernel_only"]["value"] - 0.8) < 0.01  # ms
    assert row["kernel_only"]["flags"].keys() == {"kernel_only_write_cache"}
    page = client.get("/reproduction", params={"machine_id": machine_id})
    assert "kernel flushes off; device cache unchanged: 0.8" in page.text
    assert "cannot be measured here" in page.text
    assert re.search(r'data-testid="unavailable">\d+ cannot have one on this machine', page.text)
    assert "not the thesis&#39;s write-cache setting" in page.text
    markdown = client.get(
        f"/api/v1/machines/{machine_id}/reproduction", params={"format": "markdown"}
    ).text
    assert "kernel flushes off; device cache unchanged: 0.8" in markdown
    assert "**cannot be measured here**" in markdown

    store_results(
        client,
        machine_id,
        agent,
        "storage",
        [_fsync(steady(5000.0), write_cache("off", "off", backend="ata"))],
        params={"write_cache": "off"},
    )
    row = fsync_row()
    assert row["status"] == "measured" and abs(row["lab"]["value"] - 5.0) < 0.01
    assert row["lab"]["flags"] == {} and row["kernel_only"] is None
    assert 0 < row["lab"]["median_ci_percent"] < 1.5


def test_a_write_cache_factor_keeps_kernel_only_results_under_their_own_values(
    client: TestClient,
) -> None:
    machine_id, agent = register_machine(client, "lab-vm", FINGERPRINT)
    matrix = client.post(
        "/api/v1/matrices",
        json={
            "machine_ids": [machine_id],
            "suites": ["page-touch"],
            "factors": {"write_cache": ["on", "off"]},
        },
    )
    assert matrix.status_code == 201, matrix.text
    run_id = matrix.json()["runs"][0]["run_id"]
    from tests.helpers import AGENT, claim, upload

    for _ in range(2):
        job = claim(client, agent).json()
        state = job["params"]["write_cache"]
        cache = write_cache(state, state, backend="kernel", disk="vda")
        record = result_record(
            params={"n": 1, "write_cache": state},
            samples=steady(10.0 if state == "on" else 6.0),
            env=env(cache=cache),
        )
        assert upload(client, agent, job["job_id"], [record]).status_code == 201
        client.post(
            f"{AGENT}/jobs/{job['job_id']}/finish", json={"status": "succeeded"}, headers=agent
        )

    query = {"kind": "factor", "factor": "write_cache", "run": run_id}
    plain = client.get("/api/v1/compare", params={**query, "a": "on", "b": "off"}).json()
    assert plain["pairs"] == []
    assert "compare them as write_cache=kernel-off" in plain["note"]
    kernel = client.get(
        "/api/v1/compare", params={**query, "a": "kernel-on", "b": "kernel-off"}
    ).json()
    (pair,) = kernel["pairs"]
    assert pair["in_doubt"] and not pair["significant"]
    assert "A: kernel-only write cache; B: kernel-only write cache" in pair["verdict"]


def _insert(procs: int, cache: dict[str, Any]) -> dict[str, Any]:
    """A durable B+-tree (advisory) insert throughput at the thesis's 250,000 keys."""
    return result_record(
        benchmark="insert",
        sut="libxac",
        metric="throughput",
        unit="ops/s",
        better="higher",
        params={
            "tree": "btree",
            "block_bytes": 4096,
            "version": "transactional",
            "count": 250000,
            "procs": procs,
            "durability": "durable",
            "advisory": True,
            "write_cache": cache["state"],
        },
        samples=steady(1000.0 * procs),
        env=env(cache=cache),
    )


def test_a_derived_row_whose_operands_cannot_be_measured_here_says_so(
    client: TestClient,
) -> None:
    machine_id, agent = register_machine(client, "lab-virtio", FINGERPRINT)
    kernel_off = write_cache("off", "off", backend="kernel", disk="vda")
    store_results(
        client,
        machine_id,
        agent,
        "search-tree",
        [_insert(1, kernel_off), _insert(2, kernel_off)],
        params={"write_cache": "off"},
    )
    body = client.get(f"/api/v1/machines/{machine_id}/reproduction").json()
    table = next(t for t in body["tables"] if t["table"] == "5.5")
    rows = {
        r["column"]: r
        for r in table["rows"]
        if r["identity"].get("search_tree") == "B+-tree, w. adv."
    }
    assert rows["time_1proc"]["status"] == "unavailable"
    assert rows["time_2proc"]["status"] == "unavailable"
    for derived in ("speedup_pct", "speedup"):
        row = rows[derived]
        assert row["status"] == "unavailable" and row["lab"] is None
        assert row["missing"].startswith("cannot be measured on this machine: needs ")
        assert "which this machine cannot measure" in row["missing"]
    # The CO B-tree was not run at all: still "not measured yet".
    plain = next(
        r
        for r in table["rows"]
        if r["identity"].get("search_tree") == "CO B-tree, no adv." and r["column"] == "speedup"
    )
    assert plain["status"] == "missing" and plain["missing"].startswith("not measured yet")
    assert table["unavailable"] == 4
    assert body["unavailable"] >= 4
