"""The user API on SQLite and PostgreSQL."""

from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.conftest import row_counts
from tests.helpers import claim, create_run, page_touch_results, register, upload


def test_healthz_and_openapi(client: TestClient) -> None:
    assert client.get("/healthz").json()["status"] == "ok"
    paths = client.get("/openapi.json").json()["paths"]
    for path in ("/api/agent/v1/register", "/api/agent/v1/jobs/claim", "/api/v1/runs"):
        assert path in paths


def test_machines_list(client: TestClient) -> None:
    machine_id, _headers = register(client, "lab-07")
    machines = client.get("/api/v1/machines").json()
    assert len(machines) == 1
    machine = machines[0]
    assert machine["id"] == machine_id
    assert machine["name"] == "lab-07"
    assert machine["online"] is True
    assert machine["fingerprint_hash"].startswith("sha256:")
    assert len(machine["fingerprint_hash"]) == len("sha256:") + 64
    assert machine["epoch"] == 1, "a new machine starts its first epoch"
    keys = {"id", "name", "fingerprint_hash", "last_seen_at", "online", "approved", "epoch"}
    assert set(machine) == keys


def test_suites_are_the_declarations(client: TestClient) -> None:
    suites = client.get("/api/v1/suites").json()
    page_touch = next(s for s in suites if s["name"] == "page-touch")
    assert page_touch["params"]["max_pages"]["max"] == 1024


def test_create_run_and_read_it(client: TestClient) -> None:
    machine_id, _headers = register(client)
    created = create_run(client, machine_id, max_pages=64)
    run = client.get(f"/api/v1/runs/{created['run_id']}").json()
    assert run["status"] == "queued"
    assert run["params"] == {"max_pages": 64}
    assert run["machine_id"] == machine_id
    assert [job["id"] for job in run["jobs"]] == created["job_ids"]
    assert client.get(f"/api/v1/runs/{created['run_id']}/results").json() == []


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"suite": "no-such-suite"}, "Unknown suite 'no-such-suite'"),
        ({"profile": "overnight"}, "no profile 'overnight'"),
        ({"machine_id": 999999}, "Machine 999999 does not exist"),
        ({"params": {"max_pages": 4096}}, "above its maximum 1024"),
        ({"params": {"repetitions": 0}}, "below its minimum 1"),
        ({"params": {"repetitions": "many"}}, "must be an integer"),
        ({"params": {"colour": "blue"}}, "does not declare a parameter 'colour'"),
    ],
)
def test_bad_run_requests_are_422_and_store_nothing(
    client: TestClient, app: FastAPI, change: dict[str, Any], words: str
) -> None:
    machine_id, _headers = register(client)
    body = {"machine_id": machine_id, "suite": "page-touch", "profile": "quick", "params": {}}
    body.update(change)
    reply = client.post("/api/v1/runs", json=body)
    assert reply.status_code == 422
    assert words in reply.json()["detail"]
    counts = row_counts(app)
    assert counts["runs"] == 0 and counts["jobs"] == 0


def test_a_mixed_search_tree_run_without_a_writer_is_422_and_stores_nothing(
    client: TestClient, app: FastAPI
) -> None:
    """The suite's rules (contracts/suites/search-tree.json) refuse what every program would
    refuse with exit 2, before a job is queued."""
    machine_id, _headers = register(client)
    body = {"machine_id": machine_id, "suite": "search-tree", "profile": "quick"}
    for params, words in (
        ({"op": "mixed", "procs": 1, "readers": 1}, "readers must be below procs"),
        ({"op": "mixed", "procs": 3, "readers": 3}, "readers must be below procs"),
    ):
        reply = client.post("/api/v1/runs", json={**body, "params": params})
        assert reply.status_code == 422
        assert words in reply.json()["detail"]
    counts = row_counts(app)
    assert counts["runs"] == 0 and counts["jobs"] == 0
    reply = client.post("/api/v1/runs", json={**body, "params": {"op": "mixed", "procs": 3}})
    assert reply.status_code == 201, reply.text


def test_unknown_run_is_404(client: TestClient) -> None:
    assert client.get("/api/v1/runs/424242").status_code == 404
    assert client.get("/api/v1/runs/424242/results").status_code == 404
    assert client.get("/api/v1/runs/424242/charts").status_code == 404


def test_results_and_chart_are_computed_by_the_server(client: TestClient) -> None:
    machine_id, headers = register(client)
    run_id = create_run(client, machine_id)["run_id"]
    job_id = claim(client, headers).json()["job_id"]
    results = page_touch_results(max_pages=8, repetitions=3)
    assert upload(client, headers, job_id, results).status_code == 201

    listed = client.get(f"/api/v1/runs/{run_id}/results").json()
    first = listed[0]
    samples = sorted(results[0]["samples"])
    assert first["median"] == samples[1]
    assert first["min"] == samples[0] and first["max"] == samples[2] == first["p99"]
    assert first["mean"] == pytest.approx(sum(samples) / 3)

    sections = client.get(f"/api/v1/runs/{run_id}/charts").json()["sections"]
    assert [s["benchmark"] for s in sections] == ["page_touch", "sigsegv_roundtrip", "mprotect"]
    chart = sections[0]["figures"][0]
    assert chart["kind"] == "lines" and chart["unit"] == "us"
    assert chart["x_title"] == "n: pages each transaction touches"
    assert chart["y_title"] == "time per page (µs; lower is better)"
    assert [s["label"] for s in chart["series"]] == [
        "LIBXAC · access read · advisory no",
        "LIBXAC · access read · advisory yes",
        "LIBXAC · access write · advisory no",
        "LIBXAC · access write · advisory yes",
    ]
    assert all([m["x"] for m in s["marks"]] == [1, 2, 4, 8] for s in chart["series"])
    assert chart["series"][0]["marks"][0]["y"] == first["median"]
    assert chart["common"] == "durability nondurable"
    # The floors measure another metric (time per call): single values, not reference lines.
    assert chart["references"] == []
    floors = [v for s in sections[1:] for v in s["single_values"]]
    assert [(v["system_title"], v["metric"]) for v in floors] == [
        ("operating system", "time_per_call")
    ] * 2
