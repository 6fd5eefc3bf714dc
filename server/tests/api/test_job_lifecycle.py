"""Leases, heartbeats, cancellation and streamed logs, on SQLite and PostgreSQL."""

import time
from datetime import timedelta

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import update

from tests.helpers import AGENT, claim, create_run, register
from xaclab_server.models import Job
from xaclab_server.models.base import utcnow
from xaclab_server.services.jobs import expire_leases

POLL = 0.25  # over make_settings' claim_poll_seconds (0.2)


def _age_heartbeat(app: FastAPI, job_id: int, seconds: float) -> None:
    with app.state.sessionmaker() as session:
        session.execute(
            update(Job)
            .where(Job.id == job_id)
            .values(heartbeat_at=utcnow() - timedelta(seconds=seconds))
        )
        session.commit()


def _job(client: TestClient, run_id: int) -> dict[str, object]:
    job: dict[str, object] = client.get(f"/api/v1/runs/{run_id}").json()["jobs"][0]
    return job


def test_heartbeat_extends_the_lease_and_reports_cancel(client: TestClient) -> None:
    machine_id, headers = register(client)
    run = create_run(client, machine_id)
    job_id = claim(client, headers).json()["job_id"]
    reply = client.post(f"{AGENT}/jobs/{job_id}/heartbeat", json={}, headers=headers)
    assert reply.status_code == 200 and reply.json()["cancel"] is False

    reply = client.post(f"/api/v1/jobs/{job_id}/cancel")
    assert reply.json() == {"job_id": job_id, "status": "running", "cancel_requested": True}
    reply = client.post(f"{AGENT}/jobs/{job_id}/heartbeat", json={}, headers=headers)
    assert reply.json()["cancel"] is True
    progress = client.post(
        f"{AGENT}/jobs/{job_id}/progress", json={"fraction": 0.5}, headers=headers
    )
    assert progress.json()["cancel"] is True

    finish = {"status": "cancelled", "message": "cancelled: stopped"}
    assert client.post(f"{AGENT}/jobs/{job_id}/finish", json=finish, headers=headers).is_success
    assert client.post(f"{AGENT}/jobs/{job_id}/finish", json=finish, headers=headers).is_success
    assert _job(client, run["run_id"])["status"] == "cancelled"
    assert client.get(f"/api/v1/runs/{run['run_id']}").json()["status"] == "cancelled"
    reply = client.post(f"{AGENT}/jobs/{job_id}/heartbeat", json={}, headers=headers)
    assert reply.status_code == 409


def test_cancel_a_queued_job_at_once_and_refuse_a_finished_one(client: TestClient) -> None:
    machine_id, headers = register(client)
    run = create_run(client, machine_id)
    job_id = run["job_ids"][0]
    assert client.post(f"/api/v1/jobs/{job_id}/cancel").json()["status"] == "cancelled"
    assert claim(client, headers).status_code == 204, "a cancelled job is never claimed"
    assert client.post(f"/api/v1/jobs/{job_id}/cancel").status_code == 200
    assert client.post("/api/v1/jobs/999999/cancel").status_code == 404

    other = create_run(client, machine_id)["job_ids"][0]
    claim(client, headers)
    client.post(f"{AGENT}/jobs/{other}/finish", json={"status": "succeeded"}, headers=headers)
    assert client.post(f"/api/v1/jobs/{other}/cancel").status_code == 409


def test_expired_lease_is_requeued_once_then_failed(client: TestClient, app: FastAPI) -> None:
    machine_id, headers = register(client)
    run = create_run(client, machine_id)
    job_id = claim(client, headers).json()["job_id"]

    _age_heartbeat(app, job_id, 10_000)
    time.sleep(POLL)  # a process sweeps at most once per poll interval
    reply = claim(client, headers)  # the claim path sweeps, then claims it again
    assert reply.status_code == 200 and reply.json()["job_id"] == job_id
    with app.state.sessionmaker() as session:
        job = session.get_one(Job, job_id)
        assert job.attempt == 2 and job.status == "running"

    _age_heartbeat(app, job_id, 10_000)
    time.sleep(POLL)
    assert claim(client, headers).status_code == 204
    job_out = _job(client, run["run_id"])
    assert job_out["status"] == "failed" and "lease expired" in str(job_out["message"])
    assert client.get(f"/api/v1/runs/{run['run_id']}").json()["status"] == "failed"


def test_expired_lease_of_a_cancelled_job_cancels_it(client: TestClient, app: FastAPI) -> None:
    machine_id, headers = register(client)
    run = create_run(client, machine_id)
    job_id = claim(client, headers).json()["job_id"]
    client.post(f"/api/v1/jobs/{job_id}/cancel")
    _age_heartbeat(app, job_id, 10_000)
    with app.state.sessionmaker() as session:
        assert expire_leases(session=session, lease_seconds=300, max_attempts=2) == [job_id]
    assert _job(client, run["run_id"])["status"] == "cancelled"


def test_logs_are_stored_once_per_seq(client: TestClient) -> None:
    machine_id, headers = register(client)
    run = create_run(client, machine_id)
    job_id = run["job_ids"][0]
    chunk = {"seq": 1, "stream": "stderr", "text": "hello\n"}
    assert (
        client.post(f"{AGENT}/jobs/{job_id}/logs", json=chunk, headers=headers).status_code == 409
    )
    claim(client, headers)
    assert (
        client.post(f"{AGENT}/jobs/{job_id}/logs", json=chunk, headers=headers).status_code == 201
    )
    again = dict(chunk, text="changed\n")
    reply = client.post(f"{AGENT}/jobs/{job_id}/logs", json=again, headers=headers)
    assert reply.status_code == 200 and reply.json() == {"stored": False}
    second = {"seq": 2, "stream": "stdout", "text": "x" * 10}
    assert client.post(f"{AGENT}/jobs/{job_id}/logs", json=second, headers=headers).is_success
    too_big = {"seq": 3, "stream": "stderr", "text": "x" * (64 * 1024 + 1)}
    assert (
        client.post(f"{AGENT}/jobs/{job_id}/logs", json=too_big, headers=headers).status_code == 422
    )
    bad_stream = {"seq": 4, "stream": "/etc/passwd", "text": ""}
    assert (
        client.post(f"{AGENT}/jobs/{job_id}/logs", json=bad_stream, headers=headers).status_code
        == 422
    )
    logs = client.get(f"/api/v1/jobs/{job_id}/logs").json()
    assert [(c["seq"], c["text"]) for c in logs] == [(1, "hello\n"), (2, "x" * 10)]


def test_runs_accept_agent_factors_and_refuse_bad_ones(client: TestClient) -> None:
    machine_id, _ = register(client)
    create_run(client, machine_id, write_cache="off", pin_cpu=0, drop_caches=True, timeout=60)
    create_run(client, machine_id, target_dir="/mnt/disk-under-test")
    for params in (
        {"write_cache": "maybe"},
        {"pin_cpu": -1},
        {"timeout": 0},
        {"target_dir": "/mnt/../etc"},
        {"target_dir": "relative"},
        {"target_dir": "/mnt/x;rm -rf /"},
    ):
        reply = client.post(
            "/api/v1/runs",
            json={
                "machine_id": machine_id,
                "suite": "page-touch",
                "profile": "quick",
                "params": params,
            },
        )
        assert reply.status_code == 422, params
