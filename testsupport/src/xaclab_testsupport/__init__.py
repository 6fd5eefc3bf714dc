"""The real processes xaclab's tests (and ``make demo``) start, written once.

- :func:`free_port`, :func:`port_is_free`: loopback ports.
- :class:`PgCluster`: a PostgreSQL cluster of one's own (scripts/pg-cluster.sh);
  :func:`postgres_server_url`: ``XACLAB_TEST_PG_URL`` or such a cluster;
  :class:`PgDatabases`: fresh databases on a server, dropped together.
- :class:`ServerProcess`: ``xaclab-server`` on a free port, waited for on /healthz.
- :class:`AgentProcess`: ``xaclab-agent`` commands and its daemon.
- :mod:`xaclab_testsupport.fixtures`: pytest fixtures for a conftest to re-export.
- :mod:`xaclab_testsupport.tls`: a throw-away CA and the server certificates it signs.
- :mod:`xaclab_testsupport.git`: throw-away git repositories (libxac's history);
  :mod:`xaclab_testsupport.receiver`: a local webhook receiver.

Everything is started in a ``with`` block (or start/stop) and stopped by its own
PID or data directory, never by name.  One error, :class:`ProcessFailed`
(a ``RuntimeError``): a child exited, did not answer in time, or a command
failed; the message carries what the child wrote.
"""

from xaclab_testsupport.agent import AgentProcess
from xaclab_testsupport.paths import LIBXAC_BIN, REPO, VENV_BIN
from xaclab_testsupport.ports import free_port, port_is_free
from xaclab_testsupport.postgres import (
    PgCluster,
    PgDatabases,
    create_database,
    database_url,
    libpq_url,
    postgres_server_url,
)
from xaclab_testsupport.processes import ProcessFailed, stop_process, wait_until_answers
from xaclab_testsupport.server import ServerProcess

__all__ = [
    "LIBXAC_BIN",
    "REPO",
    "VENV_BIN",
    "AgentProcess",
    "PgCluster",
    "PgDatabases",
    "ProcessFailed",
    "ServerProcess",
    "create_database",
    "database_url",
    "free_port",
    "libpq_url",
    "port_is_free",
    "postgres_server_url",
    "stop_process",
    "wait_until_answers",
]
