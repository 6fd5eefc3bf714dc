"""A real PostgreSQL holding the results of a real page-touch run.

PostgreSQL comes from XACLAB_TEST_PG_URL when `make test` provides one;
otherwise a throw-away cluster is started with scripts/pg-cluster.sh and
stopped at the end.  The data gets there the way a lab's does: the real
xaclab-server on a fresh database, an agent registered over HTTP, a run
created through the user API, the job claimed, libxac/bin/page_touch --quick
run from the suite's argument vector and its stdout uploaded as results
(docs/agent-protocol.md).
"""

from __future__ import annotations

import json
import os
import platform
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

TOP = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
MACHINE = "dash-lab-01"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


@pytest.fixture(scope="session")
def dash_pg_admin_url() -> Iterator[str]:
    url = os.environ.get("XACLAB_TEST_PG_URL")
    if url:
        yield url
        return
    cluster = tempfile.mkdtemp(prefix="xaclab-dash-pg-")
    port = _free_port()
    subprocess.run([str(TOP / "scripts/pg-cluster.sh"), "start", cluster, str(port)], check=True)
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([str(TOP / "scripts/pg-cluster.sh"), "stop", cluster], check=False)


@pytest.fixture(scope="session")
def dash_pg_url(dash_pg_admin_url: str) -> Iterator[str]:
    name = f"xaclab_dash_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(libpq(dash_pg_admin_url), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield f"{dash_pg_admin_url.rsplit('/', 1)[0]}/{name}"
    with psycopg.connect(libpq(dash_pg_admin_url), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def dash_server(dash_pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    """(base URL, registration token, an admin's API token) of a real server on the fresh database."""
    port = _free_port()
    token = secrets.token_urlsafe(24)
    workdir = tmp_path_factory.mktemp("dash-server")
    log = workdir / "server.log"
    env = dict(
        os.environ,
        XACLAB_DATABASE_URL=dash_pg_url,
        XACLAB_REGISTRATION_TOKEN=token,
        XACLAB_DATA_DIR=str(workdir),
    )
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(VENV_BIN / "xaclab-server"), "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=workdir,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"xaclab-server exited early:\n{log.read_text()}")
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"xaclab-server not healthy in 60 s:\n{log.read_text()}")
            time.sleep(0.2)
        made = subprocess.run(
            [str(VENV_BIN / "xaclab-server"), "create-admin", "--username", "admin", "--api-token", "seed"],
            env=dict(env, XACLAB_ADMIN_PASSWORD=secrets.token_urlsafe(18)),
            capture_output=True,
            text=True,
            check=True,
            cwd=workdir,
        )
        yield base, token, made.stdout.strip()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _suite_argv(suite: dict[str, object], profile: str) -> list[list[str]]:
    programs = suite["programs"]
    profiles = suite["profiles"]
    assert isinstance(programs, list) and isinstance(profiles, dict)
    return [[str(TOP / "libxac" / "bin" / p), *profiles[profile]] for p in programs]


@pytest.fixture(scope="session")
def seeded_db(dash_server: tuple[str, str, str], dash_pg_url: str) -> str:
    """Run page-touch (quick) through the agent protocol; return the libpq URL."""
    base, registration_token, api_token = dash_server
    agent_api = f"{base}/api/agent/v1"
    fingerprint = {
        "hostname": socket.gethostname(),
        "kernel": platform.release(),
        "machine": platform.machine(),
    }
    reply = httpx.post(
        f"{agent_api}/register",
        json={
            "registration_token": registration_token,
            "name": MACHINE,
            "fingerprint": fingerprint,
        },
        timeout=30,
    )
    assert reply.status_code == 201, reply.text
    machine_id, agent_token = reply.json()["machine_id"], reply.json()["agent_token"]
    agent = httpx.Client(base_url=agent_api, timeout=90, headers={"Authorization": f"Bearer {agent_token}"})

    created = httpx.post(
        f"{base}/api/v1/runs",
        json={
            "machine_id": machine_id,
            "suite": "page-touch",
            "profile": "quick",
            "params": {},
        },
        headers={"Authorization": f"Bearer {api_token}"},
        timeout=30,
    )
    assert created.status_code == 201, created.text
    run_id = created.json()["run_id"]

    claim = agent.post("/jobs/claim", params={"wait": 10})
    assert claim.status_code == 200, (claim.status_code, claim.text)
    job = claim.json()
    assert job["run_id"] == run_id and job["suite"] == "page-touch"

    suite = json.loads((TOP / "libxac" / "suites" / "page-touch.json").read_text())
    results = []
    for argv in _suite_argv(suite, job["profile"]):
        assert Path(argv[0]).is_file(), f"{argv[0]} is missing; run `make -C libxac`"
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        for line in proc.stdout.splitlines():
            if line.strip():
                result = json.loads(line)
                result["env"] = fingerprint
                results.append(result)
    assert results, "page_touch --quick printed no results"

    for start in range(0, len(results), 1000):
        upload = agent.post(
            f"/jobs/{job['job_id']}/results",
            json={
                "upload_id": str(uuid.uuid4()),
                "results": results[start : start + 1000],
            },
        )
        assert upload.status_code in (200, 201), upload.text
    finish = agent.post(
        f"/jobs/{job['job_id']}/finish", json={"status": "succeeded", "message": f"{len(results)} results"}
    )
    assert finish.status_code == 200, finish.text
    agent.close()

    run = httpx.get(f"{base}/api/v1/runs/{run_id}", timeout=30).json()
    assert run["status"] == "succeeded", run
    return libpq(dash_pg_url)
