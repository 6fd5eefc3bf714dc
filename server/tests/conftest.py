"""Fixtures: every API test runs on SQLite and on a real PostgreSQL.

PostgreSQL comes from ``XACLAB_TEST_PG_URL`` (the harness's cluster; a fresh
database is created in it for this session and dropped afterwards) or, when
that is unset, from a throw-away cluster: ``pg_server_url`` and ``pg_databases``
are xaclab_testsupport's fixtures.
Tests are isolated by deleting every row after each one: the code under test
commits for real (and the concurrency tests need real commits).  ``client``
acts as an admin through an API token; ``anonymous`` has no credentials.
"""

import os

# Before anything imports xaclab_server.core.config, which reads the environment.
os.environ.setdefault("XACLAB_REGISTRATION_TOKEN", "test-registration-token-0123456789")
os.environ.setdefault("XACLAB_ENV", "test")

from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import delete, func, select
from xaclab_testsupport import PgDatabases as PgDatabases
from xaclab_testsupport import free_port as free_port
from xaclab_testsupport.fixtures import pg_databases as pg_databases
from xaclab_testsupport.fixtures import pg_server_url as pg_server_url

from xaclab_server.app import create_app
from xaclab_server.core.config import Settings
from xaclab_server.core.migrations import upgrade_head
from xaclab_server.core.security import hash_password
from xaclab_server.models import (
    ApiToken,
    AuditEvent,
    AuthThrottle,
    Base,
    Baseline,
    Bisection,
    BisectionRun,
    ChangePoint,
    Job,
    JobLog,
    LoginSession,
    Machine,
    MachineEpoch,
    Matrix,
    Result,
    Run,
    Schedule,
    Series,
    Upload,
    User,
    WatchSettings,
    WebhookDelivery,
)
from xaclab_server.models.base import utcnow
from xaclab_server.services import accounts
from xaclab_server.services.audit import COMMAND_LINE

REGISTRATION_TOKEN = os.environ["XACLAB_REGISTRATION_TOKEN"]


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
        # Tests run the change-point watcher's passes themselves (app.state.watcher).
        "watch_seconds": 0,
    }
    values.update(overrides)
    return Settings.model_validate(values)


@pytest.fixture(scope="session")
def app(db_url: str) -> FastAPI:
    return create_app(make_settings(db_url))


def clear_tables(app: FastAPI) -> None:
    with app.state.sessionmaker() as session:
        for model in (
            Baseline,
            WebhookDelivery,
            BisectionRun,
            Bisection,
            ChangePoint,
            WatchSettings,
            Result,
            Upload,
            JobLog,
            Job,
            Run,
            Matrix,
            Schedule,
            Series,
            MachineEpoch,
            Machine,
            ApiToken,
            LoginSession,
            AuditEvent,
            AuthThrottle,
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
        _row, token = accounts.create_api_token(
            session=session, user=user, name="tests", actor=COMMAND_LINE, now=utcnow()
        )
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
