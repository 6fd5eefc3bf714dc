"""docker/postgres-init/10-grafana-reader.sh makes Grafana's read-only login on a real PostgreSQL.

The script runs the way the postgres image runs it on a fresh volume: with
POSTGRES_USER (a superuser there, and the owner of the tables the server
makes) and POSTGRES_DB in the environment and the password in a secret file,
here against a private cluster (xaclab_testsupport's PgCluster) whose TCP logins
need a password.  No Docker engine is involved.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import errors
from xaclab_testsupport import REPO as TOP
from xaclab_testsupport import PgCluster

SCRIPT = TOP / "docker" / "postgres-init" / "10-grafana-reader.sh"
SQL = TOP / "playbooks" / "roles" / "xaclab_server" / "files" / "grafana-reader.sql"
HBA = """\
local all all trust
host all all 127.0.0.1/32 scram-sha-256
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[Path, int]]:
    with PgCluster(prefix="xaclab-postgres-init-") as pg:
        pg.write_hba(HBA)
        with pg.connect_socket() as conn:
            # As the image makes them: POSTGRES_USER is a superuser owning POSTGRES_DB.
            conn.execute("CREATE ROLE xaclab SUPERUSER LOGIN")
            conn.execute("CREATE DATABASE xaclab OWNER xaclab")
        yield pg.dir, pg.port


def test_the_init_script_makes_a_read_only_login(cluster: tuple[Path, int], tmp_path: Path) -> None:
    directory, port = cluster
    secret = tmp_path / "grafana_db_password"
    secret.write_text("a-grafana-secret-0123456789\n")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PG", "POSTGRES_", "XACLAB_"))},
        "PGHOST": str(directory),
        "PGPORT": str(port),
        "POSTGRES_USER": "xaclab",
        "POSTGRES_DB": "xaclab",
        "XACLAB_GRAFANA_DB_PASSWORD_FILE": str(secret),
        "XACLAB_GRAFANA_READER_SQL": str(SQL),
    }
    done = subprocess.run(["sh", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "changed: created the role xaclab_grafana" in done.stdout
    assert "0123456789" not in done.stdout + done.stderr

    # The server's migrations make their tables later, as xaclab.
    with psycopg.connect(host=str(directory), port=port, user="xaclab", dbname="xaclab") as conn:
        conn.execute("CREATE TABLE results (id integer PRIMARY KEY)")
        conn.execute("INSERT INTO results VALUES (1)")

    reader = f"host=127.0.0.1 port={port} user=xaclab_grafana dbname=xaclab"
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(f"{reader} password=wrong-password")
    # The file's trailing newline is not part of the password.
    with psycopg.connect(f"{reader} password=a-grafana-secret-0123456789", autocommit=True) as conn:
        assert conn.execute("SELECT id FROM results").fetchall() == [(1,)]
        conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE")
        for statement in ("INSERT INTO results VALUES (2)", "DELETE FROM results", "CREATE TABLE x (i int)"):
            with pytest.raises(errors.InsufficientPrivilege):
                conn.execute(statement)
