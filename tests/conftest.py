"""Fixtures for the cross-part tests: a real PostgreSQL and a running server.

PostgreSQL comes from XACLAB_TEST_PG_URL when `make test` provides one;
otherwise this starts a throw-away cluster with scripts/pg-cluster.sh and
stops it at the end.  Each test module gets a fresh database.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import pytest

TOP = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def pg_admin_url() -> Iterator[str]:
    url = os.environ.get("XACLAB_TEST_PG_URL")
    if url:
        yield url
        return
    cluster = tempfile.mkdtemp(prefix="xaclab-pg-")
    port = free_port()
    subprocess.run([str(TOP / "scripts/pg-cluster.sh"), "start", cluster, str(port)], check=True)
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([str(TOP / "scripts/pg-cluster.sh"), "stop", cluster], check=False)


def libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


@pytest.fixture(scope="module")
def pg_url(pg_admin_url: str) -> Iterator[str]:
    name = f"xaclab_e2e_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(libpq(pg_admin_url), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base = pg_admin_url.rsplit("/", 1)[0]
    yield f"{base}/{name}"
    with psycopg.connect(libpq(pg_admin_url), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@dataclass
class Server:
    base: str
    registration_token: str
    database_url: str
    process: subprocess.Popen[bytes]
    api_token: str  # an admin's, for the user API's writes

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_token}"}


def create_admin(env: dict[str, str]) -> str:
    """The first admin, made the way a lab makes it; returns an API token of theirs."""
    made = subprocess.run(
        [str(VENV_BIN / "xaclab-server"), "create-admin", "--username", "admin", "--api-token", "tests"],
        env=dict(env, XACLAB_ADMIN_PASSWORD=secrets.token_urlsafe(18)),
        capture_output=True,
        text=True,
        check=True,
    )
    return made.stdout.strip()


@pytest.fixture(scope="module")
def server(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    port = free_port()
    token = secrets.token_urlsafe(24)
    log = tmp_path_factory.mktemp("server") / "server.log"
    env = dict(os.environ, XACLAB_DATABASE_URL=pg_url, XACLAB_REGISTRATION_TOKEN=token)
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(VENV_BIN / "xaclab-server"), "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"server exited early:\n{log.read_text()}")
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"server not healthy in 60 s:\n{log.read_text()}")
            time.sleep(0.2)
        api_token = create_admin(env)
        yield Server(
            base=base, registration_token=token, database_url=pg_url, process=proc, api_token=api_token
        )
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
