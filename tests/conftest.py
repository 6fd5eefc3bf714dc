"""Fixtures for the cross-part tests: a real PostgreSQL and a running server.

PostgreSQL comes from XACLAB_TEST_PG_URL when `make test` provides one;
otherwise a throw-away cluster is started and stopped at the end
(xaclab_testsupport's ``pg_server_url``).  Each test module gets a fresh
database.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from xaclab_testsupport import REPO, VENV_BIN, PgDatabases, ServerProcess, libpq_url
from xaclab_testsupport.fixtures import pg_server_url as pg_server_url

# The names the test modules import from here.
__all__ = ["TOP", "VENV_BIN", "Server", "libpq"]
TOP = REPO
libpq = libpq_url


@pytest.fixture(scope="module")
def pg_url(pg_server_url: str) -> Iterator[str]:
    with PgDatabases(pg_server_url, prefix="xaclab_e2e_") as databases:
        yield databases.create()


@dataclass
class Server:
    base: str
    registration_token: str
    database_url: str
    process: ServerProcess
    api_token: str  # an admin's, for the user API's writes

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_token}"}


@pytest.fixture(scope="module")
def server(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with ServerProcess(tmp_path_factory.mktemp("server"), database_url=pg_url) as process:
        yield Server(
            base=process.base_url,
            registration_token=process.registration_token,
            database_url=pg_url,
            process=process,
            api_token=process.create_admin(),
        )
