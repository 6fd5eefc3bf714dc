"""Real processes: two servers on one PostgreSQL, a PostgreSQL restart during uploads,
and an agent that vanishes mid-job."""

import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from tests.conftest import PgDatabases, add_user, clear_tables, make_settings
from tests.helpers import AGENT, claim, create_run, register, result_record
from tests.live import PgCluster, ServerProcess, admin_token
from xaclab_server.app import create_app
from xaclab_server.core.db import make_engine, make_sessionmaker
from xaclab_server.core.migrations import upgrade_head
from xaclab_server.models import Job, Result, Upload

MACHINES = 4
JOBS_PER_MACHINE = 15


def test_two_server_processes_never_hand_out_a_job_twice(
    pg_databases: PgDatabases, tmp_path: Path
) -> None:
    """Agents on both processes (each request to either one) while jobs are queued on both."""
    url = pg_databases.create()
    upgrade_head(url)
    token = admin_token(url)
    user = {"Authorization": f"Bearer {token}"}
    fast = {"XACLAB_CLAIM_POLL_SECONDS": "0.2"}
    with (
        ServerProcess(url, tmp_path / "a.log", **fast) as one,
        ServerProcess(url, tmp_path / "b.log", **fast) as two,
    ):
        clients = [httpx.Client(base_url=s.base_url, timeout=30) for s in (one, two)]
        agents = [register(clients[i % 2], f"lab-{i}") for i in range(MACHINES)]
        seen: list[list[int]] = [[] for _ in range(MACHINES)]
        errors: list[str] = []
        done = threading.Event()

        def agent(index: int) -> None:
            machine_id, headers = agents[index]
            turn = index
            try:
                while len(seen[index]) < JOBS_PER_MACHINE and not done.is_set():
                    turn += 1
                    reply = claim(clients[turn % 2], headers, wait=2)
                    if reply.status_code == 204:
                        continue
                    assert reply.status_code == 200, reply.text
                    job_id = reply.json()["job_id"]
                    seen[index].append(job_id)
                    turn += 1
                    sent = clients[turn % 2].post(
                        f"{AGENT}/jobs/{job_id}/results",
                        json={"upload_id": str(uuid.uuid4()), "results": [result_record()]},
                        headers=headers,
                    )
                    assert sent.status_code == 201, sent.text
                    turn += 1
                    finished = clients[turn % 2].post(
                        f"{AGENT}/jobs/{job_id}/finish",
                        json={"status": "succeeded"},
                        headers=headers,
                    )
                    assert finished.status_code == 200, finished.text
            except Exception as exc:  # reported by the main thread
                errors.append(f"agent {index}: {exc!r}")

        threads = [threading.Thread(target=agent, args=(i,)) for i in range(MACHINES)]
        for thread in threads:
            thread.start()
        for n in range(JOBS_PER_MACHINE):  # queued while the agents poll, on both processes
            for index, (machine_id, _headers) in enumerate(agents):
                reply = clients[(n + index) % 2].post(
                    "/api/v1/runs",
                    json={"machine_id": machine_id, "suite": "page-touch", "profile": "quick"},
                    headers=user,
                )
                assert reply.status_code == 201, reply.text
        for thread in threads:
            thread.join(timeout=90)
        done.set()
        for client in clients:
            client.close()

    assert errors == []
    every = [job_id for jobs in seen for job_id in jobs]
    assert [j for j, c in Counter(every).items() if c > 1] == []
    assert len(every) == MACHINES * JOBS_PER_MACHINE
    engine = make_engine(url)
    try:
        with make_sessionmaker(engine)() as session:
            jobs = session.scalars(select(Job)).all()
            assert len(jobs) == MACHINES * JOBS_PER_MACHINE
            assert {j.status for j in jobs} == {"succeeded"}
            assert {j.attempt for j in jobs} == {1}, "a job went from queued to running twice"
            assert session.scalar(select(func.count()).select_from(Result)) == len(jobs)
    finally:
        engine.dispose()


UPLOADS = 40


def test_postgresql_restart_during_uploads_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    with PgCluster() as cluster:
        url = cluster.create_database("restart")
        token = admin_token(url)
        with ServerProcess(url, tmp_path / "server.log") as server:
            client = httpx.Client(base_url=server.base_url, timeout=10)
            machine_id, headers = register(client, "lab-restart")
            client.headers["Authorization"] = f"Bearer {token}"
            create_run(client, machine_id)
            job_id = claim(client, headers).json()["job_id"]
            upload_ids = [str(uuid.uuid4()) for _ in range(UPLOADS)]
            retries = Counter[str]()
            outcome: dict[str, int] = {}

            def uploader() -> None:
                for n, upload_id in enumerate(upload_ids):
                    body = {
                        "upload_id": upload_id,
                        "results": [result_record(params={"n": n}, samples=[float(n), 1.0])],
                    }
                    deadline = time.monotonic() + 60
                    while time.monotonic() < deadline:
                        try:
                            reply = client.post(
                                f"{AGENT}/jobs/{job_id}/results", json=body, headers=headers
                            )
                            if reply.status_code in (200, 201):
                                outcome[upload_id] = reply.status_code
                                break
                            retries[f"status {reply.status_code}"] += 1
                        except httpx.TransportError as exc:
                            retries[type(exc).__name__] += 1
                        time.sleep(0.05)
                    time.sleep(0.02)

            thread = threading.Thread(target=uploader)
            thread.start()
            for _ in range(2):
                time.sleep(0.3)
                cluster.stop()
                time.sleep(0.5)
                cluster.start()
            thread.join(timeout=120)
            client.close()

        assert len(outcome) == UPLOADS, f"uploads that never succeeded; retries {retries}"
        assert sum(retries.values()) > 0, "the restarts did not interrupt any upload"
        engine = make_engine(url)
        try:
            with make_sessionmaker(engine)() as session:
                stored = session.scalars(select(Upload.upload_id)).all()
                assert sorted(str(u) for u in stored) == sorted(upload_ids)
                params = [r.params["n"] for r in session.scalars(select(Result))]
                assert sorted(params) == list(range(UPLOADS))
        finally:
            engine.dispose()


@pytest.fixture
def short_lease(pg_url: str) -> Iterator[tuple[TestClient, FastAPI]]:
    app = create_app(make_settings(pg_url, lease_seconds=0.5, lease_max_attempts=2))
    with TestClient(app) as client:
        client.headers["Authorization"] = f"Bearer {add_user(app, 'lease', 'admin')}"
        yield client, app
    clear_tables(app)


def test_vanished_agent_is_requeued_then_failed(short_lease: tuple[TestClient, FastAPI]) -> None:
    """The vanished agent's lease is swept by another agent's long poll, not by its own."""
    client, app = short_lease
    machine_id, vanishing = register(client, "lab-vanishing")
    _other_id, other = register(client, "lab-other")
    run_id = create_run(client, machine_id)["run_id"]

    first = claim(client, vanishing).json()
    time.sleep(0.7)  # no heartbeat: the agent is gone
    assert claim(client, other, wait=0).status_code == 204  # sweeps every machine's leases
    job = client.get(f"/api/v1/runs/{run_id}").json()["jobs"][0]
    assert job["status"] == "queued" and "requeued" in job["message"]

    second = claim(client, vanishing).json()  # the agent came back, and vanishes again
    assert second["job_id"] == first["job_id"]
    time.sleep(0.7)
    assert claim(client, other, wait=0.3).status_code == 204
    run = client.get(f"/api/v1/runs/{run_id}").json()
    job = run["jobs"][0]
    assert job["status"] == "failed" and "lease expired" in job["message"]
    assert run["status"] == "failed"
    with app.state.sessionmaker() as session:
        assert session.get_one(Job, first["job_id"]).attempt == 2
