"""Real processes for the system tests and the benchmarks (server/bench/).

:class:`PgCluster` is a PostgreSQL cluster of one's own (scripts/pg-cluster.sh in
a temporary directory, on a free port) that can be stopped and started again;
:class:`ServerProcess` is ``python -m xaclab_server.cli`` on a free port, its
log in a file.  Both stop what they started and nothing else.
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self

import httpx
import psycopg
from sqlalchemy.engine import make_url

from xaclab_server.core.db import make_engine, make_sessionmaker
from xaclab_server.core.migrations import upgrade_head
from xaclab_server.services import accounts

REPO = Path(__file__).resolve().parents[2]
PG_CLUSTER = REPO / "scripts" / "pg-cluster.sh"
REGISTRATION_TOKEN = os.environ.get(
    "XACLAB_REGISTRATION_TOKEN", "test-registration-token-0123456789"
)


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def libpq_url(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


class PgCluster:
    """A throw-away cluster in a temporary directory; ``url(db)`` names one of its databases."""

    def __init__(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="xaclab-live-pg-"))
        self.base.chmod(0o755)
        self.dir = self.base / "cluster"
        self.port = free_port()

    def start(self) -> None:
        subprocess.run([str(PG_CLUSTER), "start", str(self.dir), str(self.port)], check=True)

    def stop(self) -> None:
        subprocess.run([str(PG_CLUSTER), "stop", str(self.dir)], check=False)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new, migrated database."""
        with psycopg.connect(libpq_url(self.url()), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        url = self.url(name)
        upgrade_head(url)
        return url

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        self.stop()
        subprocess.run(["rm", "-rf", str(self.base)], check=False)


class ServerProcess:
    """The server on ``database_url`` in a subprocess, on 127.0.0.1 and a free port."""

    def __init__(self, database_url: str, log_path: Path, **env: str) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.env = {
            **os.environ,
            "XACLAB_DATABASE_URL": database_url,
            "XACLAB_REGISTRATION_TOKEN": REGISTRATION_TOKEN,
            "XACLAB_ENV": "test",
            "XACLAB_LOG_FORMAT": "text",
            "XACLAB_SCHEDULER_SECONDS": "0",
            "XACLAB_DATA_DIR": str(log_path.parent),
            **env,
        }
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self, timeout: float = 30) -> None:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "xaclab_server.cli", "--port", str(self.port)],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited: {self.log_path.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.base_url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the server did not answer: {self.log_path.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        self.stop()


def admin_token(database_url: str, username: str = "admin") -> str:
    """Create an admin directly in the database and return an API token of theirs."""
    engine = make_engine(database_url)
    try:
        with make_sessionmaker(engine)() as session:
            user = accounts.create_user(
                session=session, username=username, password="live-password-0123", role="admin"
            )
            _row, token = accounts.create_api_token(session=session, user=user, name="live")
            return token
    finally:
        engine.dispose()
