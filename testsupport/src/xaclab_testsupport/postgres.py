"""PostgreSQL for the tests: a cluster of one's own, or the harness's.

``make test`` (scripts/test.sh) starts one cluster and names it in
``XACLAB_TEST_PG_URL``; :func:`postgres_server_url` uses that one when it is
set and otherwise starts a :class:`PgCluster` for as long as it is needed.
URLs are SQLAlchemy's (``postgresql+psycopg://``) as the server takes them;
:func:`libpq_url` gives the form psycopg takes.
"""

import os
import re
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

from xaclab_testsupport.lifecycle import Lifecycle
from xaclab_testsupport.paths import PG_CLUSTER_SCRIPT
from xaclab_testsupport.ports import LOOPBACK, free_port

TEST_PG_URL_VARIABLE = "XACLAB_TEST_PG_URL"


def libpq_url(url: str) -> str:
    """``postgresql+psycopg://…`` as libpq (psycopg.connect) takes it."""
    return re.sub(r"^postgresql\+\w+://", "postgresql://", url)


def database_url(server_url: str, database: str) -> str:
    """The URL of another database on the server that ``server_url`` names."""
    parts = urlsplit(server_url)
    return urlunsplit(parts._replace(path=f"/{database}"))


def create_database(server_url: str, name: str) -> str:
    """CREATE DATABASE on that server; returns the new database's URL."""
    with psycopg.connect(libpq_url(server_url), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return database_url(server_url, name)


class PgCluster(Lifecycle):
    """A throw-away cluster (scripts/pg-cluster.sh) in a temporary directory, on a
    free loopback port; it can be stopped and started again on the same port.
    As a context manager: started on entry, stopped and removed on exit."""

    def __init__(self, prefix: str = "xaclab-pg-") -> None:
        self.base = Path(tempfile.mkdtemp(prefix=prefix))
        # Not under pytest's tmp_path, and readable: the postgres user must reach it.
        self.base.chmod(0o755)
        self.dir = self.base / "cluster"
        self.port = free_port()

    def start(self) -> None:
        subprocess.run([str(PG_CLUSTER_SCRIPT), "start", str(self.dir), str(self.port)], check=True)

    def stop(self) -> None:
        """pg_ctl stop on this cluster's data directory (its postmaster.pid), nothing else."""
        subprocess.run([str(PG_CLUSTER_SCRIPT), "stop", str(self.dir)], check=False)

    def remove(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@{LOOPBACK}:{self.port}/{database}"

    def connect_socket(self) -> psycopg.Connection[tuple[object, ...]]:
        """A superuser connection over the cluster's own socket (trusted in any pg_hba)."""
        return psycopg.connect(host=str(self.dir), port=self.port, user="postgres", autocommit=True)

    def write_hba(self, text: str) -> None:
        """Replace pg_hba.conf and reload it; keep ``local all all trust`` in ``text``.
        Returns once new connections get the new rules (the reload is asynchronous:
        a new backend reports the postmaster's load time)."""
        (self.dir / "data" / "pg_hba.conf").write_text(text)
        with self.connect_socket() as conn:
            before = conn.execute("SELECT pg_conf_load_time()").fetchone()
            conn.execute("SELECT pg_reload_conf()")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with self.connect_socket() as conn:
                if conn.execute("SELECT pg_conf_load_time()").fetchone() != before:
                    return
            time.sleep(0.05)
        raise TimeoutError(f"PostgreSQL in {self.dir} did not reload pg_hba.conf")

    def close(self) -> None:
        self.stop()
        self.remove()


@contextmanager
def postgres_server_url() -> Iterator[str]:
    """The URL of a PostgreSQL server's maintenance database (``postgres``):
    ``XACLAB_TEST_PG_URL`` when set, else a :class:`PgCluster` of our own."""
    given = os.environ.get(TEST_PG_URL_VARIABLE)
    if given:
        yield given
        return
    with PgCluster() as cluster:
        yield cluster.url()


class PgDatabases(Lifecycle):
    """Fresh databases on one server, named ``<prefix><random>``; dropped together
    by :meth:`drop_all` (or on leaving the ``with`` block)."""

    def __init__(self, server_url: str, prefix: str = "xaclab_test_") -> None:
        self.server_url = server_url
        self.prefix = prefix
        self.created: list[str] = []

    def create(self) -> str:
        name = f"{self.prefix}{secrets.token_hex(6)}"
        url = create_database(self.server_url, name)
        self.created.append(name)
        return url

    def drop_all(self) -> None:
        with psycopg.connect(libpq_url(self.server_url), autocommit=True) as conn:
            for name in self.created:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.created.clear()

    def close(self) -> None:
        self.drop_all()
