"""pytest fixtures for a conftest.py to re-export under the same names, e.g.
``from xaclab_testsupport.fixtures import pg_server_url as pg_server_url``.
"""

from collections.abc import Iterator

import pytest

from xaclab_testsupport.postgres import PgDatabases, postgres_server_url


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    """The URL of a PostgreSQL server's maintenance database (``postgres``):
    the harness's (``XACLAB_TEST_PG_URL``) or a cluster started for this session."""
    with postgres_server_url() as url:
        yield url


@pytest.fixture(scope="session")
def pg_databases(pg_server_url: str) -> Iterator[PgDatabases]:
    """Creates fresh databases on that server; drops them all at the end of the session."""
    with PgDatabases(pg_server_url) as databases:
        yield databases
