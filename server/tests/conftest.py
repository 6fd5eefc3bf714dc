"""Fixtures: every API test runs on SQLite and on a real PostgreSQL.

PostgreSQL comes from ``XACLAB_TEST_PG_URL`` (the harness's cluster; a fresh
database is created in it for this session and dropped afterwards) or, when
that is unset, from a throw-away cluster started with scripts/pg-cluster.sh.
Tests are isolated by deleting every row after each one: the code under test
commits for real (and the concurrency tests need real commits).  ``client``
acts as an admin through an API token; ``anonymous`` has no credentials.
"""

import os

# Before anything imports xaclab_server.core.config, which reads the environment.
os.environ.setdefault("XACLAB_REGISTRATION_TOKEN", "test-registration-token-0123456789")
os.environ.setdefault("XACLAB_ENV", "test")

import secrets
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import delete, func, select
from sqlalchemy.engine import make_url

from xaclab_server.app import create_app
from xaclab_server.core.config import Settings
from xaclab_server.core.migrations import upgrade_head
from xaclab_server.core.security import hash_password
from xaclab_server.models import (
    ApiToken,
    Base,
    Job,
    JobLog,
    LoginSession,
    Machine,
    Matrix,
    Result,
    Run,
    Schedule,
    Upload,
    User,
)
from xaclab_server.services import accounts

REPO = Path(__file__).resolve().parents[2]
PG_CLUSTER = REPO / "scripts" / "pg-cluster.sh"
REGISTRATION_TOKEN = os.environ["XACLAB_REGISTRATION_TOKEN"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    """The URL of a PostgreSQL server's maintenance database (``postgres``)."""
    given = os.environ.get("XACLAB_TEST_PG_URL")
    if given:
        yield given
        return
    base = Path(tempfile.mkdtemp(prefix="xaclab-server-pg-"))
    base.chmod(0o755)
    cluster = base / "cluster"
    port = free_port()
    subprocess.run([str(PG_CLUSTER), "start", str(cluster), str(port)], check=True)
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([str(PG_CLUSTER), "stop", str(cluster)], check=False)
        subprocess.run(["rm", "-rf", str(base)], check=False)


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


class PgDatabases:
    """Creates fresh databases on the test server and drops them all at the end."""

    def __init__(self, server_url: str) -> None:
        self.server_url = server_url
        self.created: list[str] = []

    def create(self) -> str:
        name = f"xaclab_test_{secrets.token_hex(6)}"
        with psycopg.connect(_libpq(self.server_url), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        self.created.append(name)
        return make_url(self.server_url).set(database=name).render_as_string(hide_password=False)

    def drop_all(self) -> None:
        with psycopg.connect(_libpq(self.server_url), autocommit=True) as conn:
            for name in self.created:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pg_databases(pg_server_url: str) -> Iterator[PgDatabases]:
    databases = PgDatabases(pg_server_url)
    try:
        yield databases
    finally:
        databases.drop_all()


@pytest.fixture(scope="session")
def pg_url(pg_databases: PgDatabases) -> str:
    """A migrated PostgreSQL database for this test session."""
    url = pg_databases.create()
    upgrade_head(url)
    return url


@pytest.fixture(scope="session")
def sqlite_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('sqlite') / 'xaclab.sqlite3'}"
    upgrade_head(url)
    return url


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest) -> str:
    url: str = request.getfixturevalue(f"{'pg' if request.param == 'postgresql' else 'sqlite'}_url")
    return url


def make_settings(url: str, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "registration_token": REGISTRATION_TOKEN,
        "env": "test",
        "database_url": url,
        "claim_poll_seconds": 0.2,
    }
    values.update(overrides)
    return Settings.model_validate(values)


@pytest.fixture(scope="session")
def app(db_url: str) -> FastAPI:
    return create_app(make_settings(db_url))


def clear_tables(app: FastAPI) -> None:
    with app.state.sessionmaker() as session:
        for model in (
            Result,
            Upload,
            JobLog,
            Job,
            Run,
            Matrix,
            Schedule,
            Machine,
            ApiToken,
            LoginSession,
            User,
        ):
            session.execute(delete(model))
        session.commit()


def row_counts(app: FastAPI) -> dict[str, int]:
    with app.state.sessionmaker() as session:
        return {
            table.name: session.scalar(select(func.count()).select_from(table)) or 0
            for table in Base.metadata.sorted_tables
        }


# Hashed once: argon2 is slow on purpose, and every test needs a user.
TEST_PASSWORD = "test-password-0123"
_PASSWORD_HASH = hash_password(TEST_PASSWORD)


def add_user(app: FastAPI, username: str, role: str) -> str:
    """Create a user with TEST_PASSWORD and return an API token of theirs."""
    with app.state.sessionmaker() as session:
        user = User(username=username, password_hash=_PASSWORD_HASH, role=role)
        session.add(user)
        session.commit()
        _row, token = accounts.create_api_token(session=session, user=user, name="tests")
        return token


@pytest.fixture
def anonymous(app: FastAPI) -> Iterator[TestClient]:
    """A client with no login and no token."""
    with TestClient(app) as test_client:
        yield test_client
    clear_tables(app)


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    """A client that sends an admin's API token (agent calls override it with their own)."""
    with TestClient(app) as test_client:
        token = add_user(app, "tester", "admin")
        test_client.headers["Authorization"] = f"Bearer {token}"
        yield test_client
    clear_tables(app)
