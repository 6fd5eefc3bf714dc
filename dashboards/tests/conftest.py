"""A real PostgreSQL holding the results of real runs of every suite.

PostgreSQL comes from XACLAB_TEST_PG_URL when `make test` provides one;
otherwise a throw-away cluster is started with scripts/pg-cluster.sh and
stopped at the end.  The data gets there the way a lab's does: the real
xaclab-server on a fresh database, the real xaclab-agent registered with the
registration token, runs created through the user API (the quick profile of
page-touch, storage, search-tree and concurrency, and concurrency again on 4
processes), each claimed, run and uploaded by `xaclab-agent run --once` from
the suites' declarations (docs/agent-protocol.md).

The concurrency suite runs the seeds-004 record workload
(concurrency_records) after Tests A, B and C, so its results come from the
same agent runs.  Two idle machines (one approved with a queued run that
nobody claims, one registered without the token and pending approval) give
the lab dashboard a queue and an approval state to show.
No result is invented.
"""

from __future__ import annotations

import os
import platform
import secrets
import shutil
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
IDLE_MACHINE = "dash-idle-02"
PENDING_MACHINE = "dash-pending-03"


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
        shutil.rmtree(cluster, ignore_errors=True)  # the cluster's files: ours to remove


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


# Every suite's quick profile; concurrency twice so the speedup curve has a
# third point (procs 1 and 2 from the first run, 4 from the second).
RUNS: tuple[tuple[str, dict[str, object]], ...] = (
    ("page-touch", {}),
    ("storage", {}),
    ("search-tree", {}),
    ("concurrency", {}),
    ("concurrency", {"procs": 4, "tests": "A"}),
)
PROGRAMS = ("page_touch", "storage_journal", "tree_insert", "concurrency_test", "concurrency_records")


def _agent(env: dict[str, str], *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(VENV_BIN / "xaclab-agent"), *args], env=env, capture_output=True, text=True, timeout=timeout
    )


def _create_run(
    base: str, api_token: str, machine_id: int, suite: str, params: dict[str, object] | None = None
) -> int:
    created = httpx.post(
        f"{base}/api/v1/runs",
        json={"machine_id": machine_id, "suite": suite, "profile": "quick", "params": params or {}},
        headers={"Authorization": f"Bearer {api_token}"},
        timeout=30,
    )
    assert created.status_code == 201, created.text
    run_id: int = created.json()["run_id"]
    return run_id


def _register_idle(agent_api: str, name: str, registration_token: str | None) -> int:
    reply = httpx.post(
        f"{agent_api}/register",
        json={
            "registration_token": registration_token,
            "name": name,
            "fingerprint": {"hostname": name, "kernel": platform.release(), "machine": platform.machine()},
        },
        timeout=30,
    )
    assert reply.status_code in (200, 201, 202), reply.text
    machine_id: int = reply.json()["machine_id"]
    return machine_id


@pytest.fixture(scope="session")
def seeded_db(
    dash_server: tuple[str, str, str], dash_pg_url: str, tmp_path_factory: pytest.TempPathFactory
) -> str:
    """Every suite's quick profile run by the real agent; return the libpq URL."""
    base, registration_token, api_token = dash_server
    for program in (
        "page_touch",
        "storage_journal",
        "tree_insert",
        "concurrency_test",
        "concurrency_records",
    ):
        assert (TOP / "libxac/bin" / program).is_file(), (
            f"libxac/bin/{program} is missing; run `make -C libxac`"
        )
    home = tmp_path_factory.mktemp("dash-agent")
    token_file = home / "registration-token"
    token_file.write_text(registration_token + "\n")
    (home / "agent.toml").write_text("")
    (home / "work").mkdir()
    agent_env = {k: v for k, v in os.environ.items() if not k.startswith("XACLAB_")}
    agent_env.update(
        XACLAB_AGENT_CONFIG=str(home / "agent.toml"),
        XACLAB_AGENT_STATE_DIR=str(home / "state"),
        XACLAB_AGENT_BIN_DIR=str(TOP / "libxac/bin"),
        XACLAB_AGENT_WORK_DIR=str(home / "work"),
        XACLAB_AGENT_SUITES_DIR=str(TOP / "libxac/suites"),
        XACLAB_AGENT_PROGRESS_INTERVAL="0",
    )
    registered = _agent(
        agent_env,
        "register",
        "--server",
        base,
        "--name",
        MACHINE,
        "--registration-token-file",
        str(token_file),
        timeout=120,
    )
    assert registered.returncode == 0, registered.stderr
    machines = httpx.get(f"{base}/api/v1/machines", timeout=30).json()
    (machine_id,) = [m["id"] for m in machines if m["name"] == MACHINE]

    for suite, params in RUNS:
        run_id = _create_run(base, api_token, machine_id, suite, params)
        done = _agent(agent_env, "run", "--once", "--wait", "5", timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        run = httpx.get(f"{base}/api/v1/runs/{run_id}", timeout=30).json()
        assert run["status"] == "succeeded", run

    agent_api = f"{base}/api/agent/v1"
    idle = _register_idle(agent_api, IDLE_MACHINE, registration_token)
    _create_run(base, api_token, idle, "page-touch")
    _register_idle(agent_api, PENDING_MACHINE, None)
    return libpq(dash_pg_url)
