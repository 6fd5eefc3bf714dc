"""The agent API on SQLite and PostgreSQL (docs/agent-protocol.md)."""

import json
import threading
import time
import uuid
from collections.abc import Iterator

import numpy as np
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.conftest import row_counts
from tests.helpers import (
    AGENT,
    claim,
    create_run,
    histogram_record,
    page_touch_results,
    register,
    result_record,
    upload,
)
from xaclab_server.models import Machine, Result
from xaclab_server.services import histogram
from xaclab_server.services.jobs import create_run as queue_run
from xaclab_server.services.machines import hash_token
from xaclab_server.services.statistics import summarize, unpack_samples


def test_full_flow_register_claim_progress_upload_finish(client: TestClient, app: FastAPI) -> None:
    machine_id, headers = register(client)
    run = create_run(client, machine_id, repetitions=5, max_pages=16)

    reply = claim(client, headers)
    assert reply.status_code == 200, reply.text
    job = reply.json()
    assert job == {
        "job_id": run["job_ids"][0],
        "run_id": run["run_id"],
        "suite": "page-touch",
        "profile": "quick",
        "params": {"repetitions": 5, "max_pages": 16},
    }
    assert client.get(f"/api/v1/runs/{run['run_id']}").json()["status"] == "running"

    reply = client.post(
        f"{AGENT}/jobs/{job['job_id']}/progress",
        json={"fraction": 0.4, "message": "n=4 write"},
        headers=headers,
    )
    assert reply.status_code == 200, reply.text

    results = page_touch_results(max_pages=16)
    reply = upload(client, headers, job["job_id"], results)
    assert reply.status_code == 201, reply.text
    assert reply.json() == {"stored": len(results), "duplicate": False}

    reply = client.post(
        f"{AGENT}/jobs/{job['job_id']}/finish",
        json={"status": "succeeded", "message": f"{len(results)} results"},
        headers=headers,
    )
    assert reply.status_code == 200, reply.text
    assert reply.json()["status"] == "succeeded"

    body = client.get(f"/api/v1/runs/{run['run_id']}").json()
    assert body["status"] == "succeeded"
    assert body["finished_at"] is not None
    assert body["jobs"] == [
        {"id": job["job_id"], "status": "succeeded", "progress": 1.0, "message": "22 results"}
    ]
    listed = client.get(f"/api/v1/runs/{run['run_id']}/results").json()
    assert len(listed) == len(results)
    first = listed[0]
    assert first["n"] == 5 and first["min"] <= first["median"] <= first["max"]

    with app.state.sessionmaker() as session:
        row = session.scalars(select(Result).order_by(Result.id)).first()
        assert row is not None
        assert unpack_samples(row.samples) == results[0]["samples"]
        assert row.machine_id == machine_id and row.run_id == run["run_id"]

    # Nothing more to claim once the job finished.
    assert claim(client, headers).status_code == 204


def test_token_is_stored_only_as_a_hash(client: TestClient, app: FastAPI) -> None:
    machine_id, headers = register(client)
    token = headers["Authorization"].removeprefix("Bearer ")
    assert token.startswith("xa_")
    with app.state.sessionmaker() as session:
        machine = session.get_one(Machine, machine_id)
        assert machine.token_hash == hash_token(token)
        assert token not in json.dumps(machine.fingerprint)


def test_reregistering_replaces_the_token(client: TestClient) -> None:
    first_id, old = register(client, "lab-02")
    second_id, new = register(client, "lab-02")
    assert first_id == second_id
    assert claim(client, old).status_code == 401
    assert claim(client, new).status_code == 204
    assert len(client.get("/api/v1/machines").json()) == 1


def test_unknown_or_missing_token_is_401_with_a_message(client: TestClient) -> None:
    for headers in ({}, {"Authorization": "Bearer xa_nope"}, {"Authorization": "Basic eA=="}):
        reply = claim(client, headers)
        assert reply.status_code == 401
        assert "token" in reply.json()["detail"]


def test_bad_registration_token_is_401_and_stores_nothing(client: TestClient, app: FastAPI) -> None:
    reply = client.post(
        f"{AGENT}/register",
        json={"registration_token": "wrong", "name": "lab-01", "fingerprint": {}},
    )
    assert reply.status_code == 401
    assert reply.json()["detail"] == "The registration token is not valid."
    reply = client.post(
        f"{AGENT}/register",
        json={"registration_token": "x", "name": "bad name!", "fingerprint": {}},
    )
    assert reply.status_code == 422
    assert reply.json()["detail"].startswith("The request is not valid: name:")
    assert row_counts(app)["machines"] == 0


def test_oversized_fingerprint_is_refused(client: TestClient, app: FastAPI) -> None:
    from tests.conftest import REGISTRATION_TOKEN

    reply = client.post(
        f"{AGENT}/register",
        json={
            "registration_token": REGISTRATION_TOKEN,
            "name": "lab-01",
            "fingerprint": {"blob": "x" * 70_000},
        },
    )
    assert reply.status_code == 422
    assert "at most 65536" in reply.json()["detail"]
    assert row_counts(app)["machines"] == 0


def test_claim_returns_the_unfinished_job_again(client: TestClient) -> None:
    machine_id, headers = register(client)
    run = create_run(client, machine_id)
    first = claim(client, headers).json()
    again = claim(client, headers).json()
    assert first == again
    assert first["job_id"] == run["job_ids"][0]


def test_long_poll_wakes_when_a_run_is_queued(client: TestClient) -> None:
    machine_id, headers = register(client)
    replies: list[int] = []

    def poll() -> None:
        replies.append(claim(client, headers, wait=20).status_code)

    started = time.monotonic()
    poller = threading.Thread(target=poll)
    poller.start()
    time.sleep(0.5)
    create_run(client, machine_id)
    poller.join(timeout=15)
    assert replies == [200]
    assert time.monotonic() - started < 5


def test_long_poll_sees_jobs_queued_by_another_process(client: TestClient, app: FastAPI) -> None:
    machine_id, headers = register(client)
    replies: list[int] = []
    poller = threading.Thread(target=lambda: replies.append(claim(client, headers, 20).status_code))
    poller.start()
    time.sleep(0.5)
    # Straight into the database, as another server process would: no in-process wake-up.
    with app.state.sessionmaker() as session:
        machine = session.get_one(Machine, machine_id)
        queue_run(session=session, machine=machine, suite="page-touch", profile="quick", params={})
    started = time.monotonic()
    poller.join(timeout=15)
    assert replies == [200]
    assert time.monotonic() - started < 3


def test_repoll_of_a_known_idle_machine_still_sees_new_jobs(
    client: TestClient, app: FastAPI
) -> None:
    machine_id, headers = register(client)
    # A poll long enough for the shared poller to look and find nothing.
    assert claim(client, headers, wait=1.5).status_code == 204
    notifier = app.state.notifier
    assert notifier.known_idle(machine_id, 30)  # so the next poll skips its first query
    replies: list[int] = []
    poller = threading.Thread(target=lambda: replies.append(claim(client, headers, 20).status_code))
    poller.start()
    time.sleep(0.3)
    with app.state.sessionmaker() as session:  # as another server process would queue it
        machine = session.get_one(Machine, machine_id)
        queue_run(session=session, machine=machine, suite="page-touch", profile="quick", params={})
    poller.join(timeout=15)
    assert replies == [200]
    # A job this process queues makes nobody known idle any more.
    create_run(client, machine_id)
    assert not notifier.known_idle(machine_id, 30)


def test_long_poll_times_out_with_204(client: TestClient) -> None:
    _machine_id, headers = register(client)
    started = time.monotonic()
    assert claim(client, headers, wait=1).status_code == 204
    assert 0.9 <= time.monotonic() - started < 5
    assert claim(client, headers, wait=61).status_code == 422


def _running_job(client: TestClient) -> tuple[dict[str, str], int]:
    machine_id, headers = register(client)
    create_run(client, machine_id)
    job_id: int = claim(client, headers).json()["job_id"]
    return headers, job_id


def test_upload_twice_stores_once(client: TestClient, app: FastAPI) -> None:
    headers, job_id = _running_job(client)
    upload_id = str(uuid.uuid4())
    results = page_touch_results(max_pages=4)
    assert upload(client, headers, job_id, results, upload_id).status_code == 201
    again = upload(client, headers, job_id, results, upload_id)
    assert again.status_code == 200
    assert again.json() == {"stored": 0, "duplicate": True}
    counts = row_counts(app)
    assert counts["uploads"] == 1
    assert counts["results"] == len(results)


def test_upload_after_finish_is_accepted(client: TestClient, app: FastAPI) -> None:
    headers, job_id = _running_job(client)
    client.post(f"{AGENT}/jobs/{job_id}/finish", json={"status": "failed"}, headers=headers)
    assert upload(client, headers, job_id, [result_record()]).status_code == 201
    assert row_counts(app)["results"] == 1


def test_one_bad_result_refuses_the_whole_upload(client: TestClient, app: FastAPI) -> None:
    headers, job_id = _running_job(client)
    bad = result_record(samples=[])
    reply = upload(client, headers, job_id, [result_record(), result_record(), bad])
    assert reply.status_code == 422
    assert reply.json()["detail"].startswith("Result 2 does not follow the result format")
    counts = row_counts(app)
    assert counts["uploads"] == 0 and counts["results"] == 0


def test_a_histogram_result_is_stored_packed_and_summarised(
    client: TestClient, app: FastAPI
) -> None:
    headers, job_id = _running_job(client)
    values = np.random.default_rng(5).lognormal(1.0, 0.5, 250_000)
    record = histogram_record(values)
    reply = upload(client, headers, job_id, [record, result_record()])
    assert reply.status_code == 201, reply.text
    with app.state.sessionmaker() as session:
        rows = session.scalars(select(Result).order_by(Result.id)).all()
        binned, raw = rows
        assert binned.samples == b"" and binned.histogram is not None
        # About 700 buckets, 8 KB, where the raw samples would take 2 MB.
        assert len(binned.histogram) < 250_000 * 8 // 100
        assert histogram.unpack(binned.histogram).same_as(histogram.from_samples(values))
        assert raw.histogram is None and unpack_samples(raw.samples) == [4.1, 4.0, 4.2]
    exact = summarize(values)
    (listed,) = [
        r for r in client.get(f"/api/v1/runs/{rows[0].run_id}/results").json() if r["n"] > 3
    ]
    assert listed["n"] == 250_000
    assert (listed["min"], listed["max"], listed["mean"]) == (exact.min, exact.max, exact.mean)
    assert abs(listed["median"] - exact.median) <= histogram.BOUND * exact.median
    assert abs(listed["p99"] - exact.p99) <= histogram.BOUND * exact.p99


def test_a_malformed_histogram_is_422_and_stores_nothing(client: TestClient, app: FastAPI) -> None:
    headers, job_id = _running_job(client)
    record = histogram_record(np.linspace(1.0, 2.0, 100_001))
    record["histogram"]["buckets"][3][1] += 1
    reply = upload(client, headers, job_id, [result_record(), record])
    assert reply.status_code == 422
    assert reply.json()["detail"] == (
        "Result 1 does not follow the result format at histogram/count: "
        "the bucket counts add up to 100002, not 100001."
    )
    counts = row_counts(app)
    assert counts["uploads"] == 0 and counts["results"] == 0


def test_malformed_bodies_are_422_and_store_nothing(client: TestClient, app: FastAPI) -> None:
    headers, job_id = _running_job(client)
    url = f"{AGENT}/jobs/{job_id}/results"
    for body in (
        b"{not json",
        json.dumps({"upload_id": "not-a-uuid", "results": [result_record()]}).encode(),
        json.dumps({"upload_id": str(uuid.uuid4()), "results": "x"}).encode(),
        json.dumps({"upload_id": str(uuid.uuid4()), "results": [result_record()] * 1001}).encode(),
        b'{"upload_id": "%s", "results": [{"samples": [NaN]}]}' % str(uuid.uuid4()).encode(),
    ):
        reply = client.post(
            url, content=body, headers={**headers, "Content-Type": "application/json"}
        )
        assert reply.status_code == 422, reply.text
        assert isinstance(reply.json()["detail"], str)
    counts = row_counts(app)
    assert counts["uploads"] == 0 and counts["results"] == 0


def test_oversized_upload_is_413_before_parsing(client: TestClient, app: FastAPI) -> None:
    headers, job_id = _running_job(client)
    url = f"{AGENT}/jobs/{job_id}/results"
    limit = app.state.settings.max_body_bytes
    prefix = b'{"upload_id": "%s", "results": [' % str(uuid.uuid4()).encode()
    body = prefix + b" " * (limit + 1 - len(prefix)) + b"]}"
    headers = {**headers, "Content-Type": "application/json"}
    reply = client.post(url, content=body, headers=headers)
    assert reply.status_code == 413
    assert "larger than 33554432 bytes" in reply.json()["detail"]

    def chunked() -> Iterator[bytes]:
        yield prefix
        for _ in range(limit // (1 << 20) + 1):
            yield b" " * (1 << 20)
        yield b"]}"

    reply = client.post(url, content=chunked(), headers=headers)
    assert reply.status_code == 413
    counts = row_counts(app)
    assert counts["uploads"] == 0 and counts["results"] == 0


def test_progress_and_finish_follow_the_state_machine(client: TestClient) -> None:
    machine_id, headers = register(client)
    run = create_run(client, machine_id)
    job_id = run["job_ids"][0]
    progress = f"{AGENT}/jobs/{job_id}/progress"
    finish = f"{AGENT}/jobs/{job_id}/finish"

    assert client.post(progress, json={"fraction": 0.1}, headers=headers).status_code == 409
    assert client.post(finish, json={"status": "failed"}, headers=headers).status_code == 409
    assert upload(client, headers, job_id, [result_record()]).status_code == 409

    claim(client, headers)
    assert client.post(progress, json={"fraction": 1.5}, headers=headers).status_code == 422
    assert client.post(finish, json={"status": "failed"}, headers=headers).status_code == 200
    assert client.post(finish, json={"status": "failed"}, headers=headers).status_code == 200
    conflict = client.post(finish, json={"status": "succeeded"}, headers=headers)
    assert conflict.status_code == 409
    assert "already finished as failed" in conflict.json()["detail"]
    assert client.post(progress, json={"fraction": 0.5}, headers=headers).status_code == 409
    assert client.get(f"/api/v1/runs/{run['run_id']}").json()["status"] == "failed"

    _other_id, other = register(client, "lab-other")
    reply = client.post(progress, json={"fraction": 0.5}, headers=other)
    assert reply.status_code == 409
    assert "another machine" in reply.json()["detail"]
    assert (
        client.post(
            f"{AGENT}/jobs/999999/finish", json={"status": "failed"}, headers=other
        ).status_code
        == 404
    )
