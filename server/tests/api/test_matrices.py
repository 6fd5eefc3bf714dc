"""Run matrices, the queue, re-run and cancel, schedules, charts and the live event stream."""

import json
from datetime import timedelta
from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.conftest import row_counts
from tests.helpers import AGENT, claim, page_touch_results, register, upload
from xaclab_server.models import Schedule
from xaclab_server.models.base import utcnow
from xaclab_server.services.scheduler import fire_due_schedules


def test_matrix_expands_into_runs_and_jobs(client: TestClient) -> None:
    m1, _ = register(client, "lab-a")
    m2, _ = register(client, "lab-b")
    body = {
        "machine_ids": [m1, m2],
        "suites": ["page-touch", "storage"],
        "profiles": ["quick"],
        "params": {"repetitions": 2},
        "factors": {"write_cache": ["on", "off"], "drop_caches": [True, False]},
    }
    reply = client.post("/api/v1/matrices", json=body)
    assert reply.status_code == 201, reply.text
    created = reply.json()
    assert len(created["runs"]) == 4
    assert all(len(r["job_ids"]) == 4 for r in created["runs"])
    queue = client.get("/api/v1/queue").json()
    assert len(queue) == 16
    params = {json.dumps(j["params"], sort_keys=True) for j in queue if j["machine_id"] == m1}
    assert (
        json.dumps({"drop_caches": True, "repetitions": 2, "write_cache": "off"}, sort_keys=True)
        in params
    )
    assert client.get(f"/api/v1/matrices/{created['matrix_id']}").json() == created


def test_matrix_refuses_undeclared_factors_and_stores_nothing(
    client: TestClient, app: FastAPI
) -> None:
    machine_id, _ = register(client)
    body = {"machine_ids": [machine_id], "suites": ["page-touch"], "factors": {"procs": [1, 2]}}
    reply = client.post("/api/v1/matrices", json=body)
    assert reply.status_code == 422
    assert "does not declare the factor 'procs'" in reply.json()["detail"]
    body["factors"] = {"write_cache": ["sideways"]}
    assert (
        "must be one of on, off, unchanged"
        in client.post("/api/v1/matrices", json=body).json()["detail"]
    )
    body["factors"] = {"repetitions": list(range(1, 33)), "max_pages": list(range(1, 33))}
    assert "at most 1000" in client.post("/api/v1/matrices", json=body).json()["detail"]
    assert row_counts(app)["runs"] == 0 and row_counts(app)["matrices"] == 0


def test_cancel_and_rerun(client: TestClient) -> None:
    machine_id, headers = register(client)
    body = {
        "machine_ids": [machine_id],
        "suites": ["page-touch"],
        "factors": {"repetitions": [1, 2]},
    }
    run_id = client.post("/api/v1/matrices", json=body).json()["runs"][0]["run_id"]
    job = claim(client, headers).json()
    cancelled = client.post(f"/api/v1/runs/{run_id}/cancel").json()
    states = {j["id"]: j["status"] for j in cancelled["jobs"]}
    assert states[job["job_id"]] == "running"  # stops at its next heartbeat
    assert sorted(states.values()) == ["cancelled", "running"]
    again = client.post(f"/api/v1/runs/{run_id}/rerun")
    assert again.status_code == 201
    copy = client.get(f"/api/v1/runs/{again.json()['run_id']}").json()
    assert copy["status"] == "queued" and len(copy["jobs"]) == 2


def test_schedules_fire_once(client: TestClient, app: FastAPI) -> None:
    machine_id, _ = register(client)
    matrix = {"machine_ids": [machine_id], "suites": ["page-touch"]}
    bad = client.post(
        "/api/v1/schedules", json={"name": "x", "cron": "61 * * * *", "matrix": matrix}
    )
    assert bad.status_code == 422 and "outside 0-59" in bad.json()["detail"]
    reply = client.post(
        "/api/v1/schedules", json={"name": "nightly", "cron": "0 3 * * *", "matrix": matrix}
    )
    assert reply.status_code == 201, reply.text
    schedule_id = reply.json()["id"]
    with app.state.sessionmaker() as session:
        schedule = session.get_one(Schedule, schedule_id)
        schedule.next_run_at = utcnow() - timedelta(minutes=1)
        session.commit()
        fired = fire_due_schedules(session=session, suites=app.state.suites)
        assert len(fired) == 1
        assert fire_due_schedules(session=session, suites=app.state.suites) == []
        schedule = session.get_one(Schedule, schedule_id)
        assert schedule.next_run_at > utcnow() and schedule.next_run_at.hour == 3
    assert row_counts(app)["runs"] == 1
    off = client.patch(f"/api/v1/schedules/{schedule_id}", json={"enabled": False})
    assert off.json()["enabled"] is False
    assert client.delete(f"/api/v1/schedules/{schedule_id}").status_code == 204


def test_generic_charts_and_event_stream(client: TestClient) -> None:
    machine_id, headers = register(client)
    body = {
        "machine_ids": [machine_id],
        "suites": ["page-touch"],
        "factors": {"write_cache": ["on"]},
    }
    run_id = client.post("/api/v1/matrices", json=body).json()["runs"][0]["run_id"]
    job_id = claim(client, headers).json()["job_id"]
    client.post(
        f"{AGENT}/jobs/{job_id}/progress",
        json={"fraction": 0.5, "message": "half"},
        headers=headers,
    )
    client.post(
        f"{AGENT}/jobs/{job_id}/logs",
        json={"seq": 1, "stream": "stderr", "text": "line one\nline two\n"},
        headers=headers,
    )
    event = _first_event(client, run_id)
    assert event["status"] == "running"
    job = event["jobs"][0]
    assert job["progress"] == 0.5 and job["eta_seconds"] is not None
    assert job["log_tail"] == ["line one", "line two"]
    assert upload(client, headers, job_id, page_touch_results(max_pages=4)).status_code == 201
    client.post(f"{AGENT}/jobs/{job_id}/finish", json={"status": "succeeded"}, headers=headers)
    with client.stream("GET", f"/api/v1/runs/{run_id}/events") as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        text = "".join(stream.iter_text())
    assert "event: end" in text and '"status":"succeeded"' in text
    sections = client.get(f"/api/v1/runs/{run_id}/charts").json()["sections"]
    touch = next(s for s in sections if s["benchmark"] == "page_touch")["figures"][0]
    assert touch["kind"] == "lines" and touch["x_title"].startswith("n")
    assert [[m["x"] for m in s["marks"]] for s in touch["series"]] == [[1, 2, 4]] * 4
    assert client.get("/api/v1/runs/99999/events").status_code == 404


def _first_event(client: TestClient, run_id: int) -> dict[str, Any]:
    with client.stream("GET", f"/api/v1/runs/{run_id}/events") as stream:
        for line in stream.iter_lines():
            if line.startswith("data: "):
                event: dict[str, Any] = json.loads(line[len("data: ") :])
                return event
    raise AssertionError("no event")
