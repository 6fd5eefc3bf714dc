"""The xaclab_server role's read-only Grafana role, made on a real PostgreSQL.

The role's own tasks (tasks/grafana_reader.yml, which runs
files/grafana-reader.sql with psql as the postgres user) are applied with a
local connection to a private cluster (xaclab_testsupport's PgCluster), whose
pg_hba.conf is changed so that TCP logins need a password, as on Debian.
The reader must log in with the password the role keeps in its root-only
file, SELECT from tables made before and after the role ran, and be refused
INSERT, UPDATE, DELETE, TRUNCATE and CREATE even in a read-write
transaction.  A second run changes nothing; a given password replaces the
kept one.
"""

from __future__ import annotations

import json
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import errors
from xaclab_testsupport import PgCluster

from playbooks.tests.ansible_helpers import PLAYBOOKS, ansible_env, tool
from playbooks.tests.test_site import recap

READER = "xaclab_grafana"
OWNER = "xaclab"
DATABASE = "xaclab"
PLAY = """\
- name: Apply the xaclab_server role's Grafana reader tasks
  hosts: all
  gather_facts: false
  tasks:
    - name: Create Grafana's read-only PostgreSQL role
      ansible.builtin.include_role:
        name: xaclab_server
        tasks_from: grafana_reader.yml
"""
HBA = """\
local all all trust
host all postgres 127.0.0.1/32 trust
host all all 127.0.0.1/32 scram-sha-256
"""


@dataclass
class Cluster:
    dir: Path
    port: int

    def conninfo(self, user: str = "postgres", dbname: str = DATABASE, password: str | None = None) -> str:
        info = f"host=127.0.0.1 port={self.port} user={user} dbname={dbname}"
        return info + (f" password={password}" if password is not None else "")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with PgCluster(prefix="xaclab-grafana-reader-") as pg:
        pg.write_hba(HBA)
        found = Cluster(pg.dir, pg.port)
        with psycopg.connect(found.conninfo(dbname="postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE ROLE {OWNER} LOGIN")
            conn.execute(f"CREATE DATABASE {DATABASE} OWNER {OWNER}")
        _owner_makes_table(found, "made_before")
        yield found


def _owner_makes_table(cluster: Cluster, name: str) -> None:
    """A table owned by the server's role, as its migrations make them."""
    with psycopg.connect(cluster.conninfo(), autocommit=True) as conn:
        conn.execute(f"SET ROLE {OWNER}")
        conn.execute(f"CREATE TABLE {name} (id integer PRIMARY KEY, note text)")
        conn.execute(f"INSERT INTO {name} VALUES (1, 'one')")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, cluster: Cluster) -> Path:
    root = tmp_path_factory.mktemp("grafana-reader")
    (root / "inventory.ini").write_text(
        "[server]\nlocalhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n"
    )
    (root / "play.yml").write_text(PLAY)
    variables = {
        "ansible_become": False,
        "xaclab_server_postgresql_socket_dir": str(cluster.dir),
        "xaclab_server_postgresql_port": cluster.port,
        "xaclab_server_database": DATABASE,
        "xaclab_server_user": OWNER,
        "xaclab_server_config_dir": str(root / "etc"),
    }
    (root / "vars.json").write_text(json.dumps(variables))
    return root


def run_play(lab: Path, **extra: Any) -> subprocess.CompletedProcess[str]:
    env = ansible_env(lab / "ansible-home")
    env["ANSIBLE_ROLES_PATH"] = str(PLAYBOOKS / "roles")
    args = [tool("ansible-playbook"), "-i", str(lab / "inventory.ini"), "-e", f"@{lab / 'vars.json'}"]
    if extra:
        args += ["-e", json.dumps(extra)]
    proc = subprocess.run(
        [*args, str(lab / "play.yml")],
        cwd=PLAYBOOKS,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    return proc


def changed(proc: subprocess.CompletedProcess[str]) -> int:
    hosts = recap(proc.stdout)
    assert set(hosts) == {"localhost"}, proc.stdout[-3000:]
    assert hosts["localhost"]["failed"] == 0
    return hosts["localhost"]["changed"]


def kept_password(lab: Path) -> str:
    path = lab / "etc" / "grafana-db-password"
    info = path.stat()
    assert stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == 0
    text = path.read_text()
    assert text.endswith("\n")
    return text.rstrip("\n")


@pytest.fixture(scope="module")
def first_run(lab: Path, cluster: Cluster) -> str:
    """Runs the role once; returns the password it generated."""
    assert changed(run_play(lab)) > 0
    _owner_makes_table(cluster, "made_after")
    return kept_password(lab)


def test_the_password_is_generated_and_kept_for_root_only(first_run: str) -> None:
    assert len(first_run) >= 32 and first_run.isalnum()


def test_the_reader_logs_in_with_the_kept_password_only(cluster: Cluster, first_run: str) -> None:
    with psycopg.connect(cluster.conninfo(READER, password=first_run)) as conn:
        assert conn.execute("SELECT current_user").fetchone() == (READER,)
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(cluster.conninfo(READER, password=first_run + "x"))


def test_the_reader_has_no_role_attribute_but_login(cluster: Cluster, first_run: str) -> None:
    with psycopg.connect(cluster.conninfo()) as conn:
        row = conn.execute(
            "SELECT rolcanlogin, rolsuper, rolcreatedb, rolcreaterole, rolreplication, rolbypassrls,"
            " (SELECT count(*) FROM pg_auth_members WHERE member = r.oid)"
            " FROM pg_roles r WHERE rolname = %s",
            (READER,),
        ).fetchone()
    assert row == (True, False, False, False, False, False, 0)


@pytest.mark.parametrize("table", ["made_before", "made_after"])
def test_the_reader_selects_from_old_and_new_tables(cluster: Cluster, first_run: str, table: str) -> None:
    with psycopg.connect(cluster.conninfo(READER, password=first_run)) as conn:
        assert conn.execute(f"SELECT id, note FROM {table}").fetchall() == [(1, "one")]
        assert conn.execute("SHOW default_transaction_read_only").fetchone() == ("on",)


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO {table} VALUES (2, 'two')",
        "UPDATE {table} SET note = 'changed'",
        "DELETE FROM {table}",
        "TRUNCATE {table}",
        "CREATE TABLE public.reader_made (id integer)",
        "CREATE SCHEMA reader_made",
        "ALTER TABLE {table} ADD COLUMN extra integer",
        "DROP TABLE {table}",
    ],
)
@pytest.mark.parametrize("table", ["made_before", "made_after"])
def test_the_reader_cannot_write_even_in_a_read_write_transaction(
    cluster: Cluster, first_run: str, statement: str, table: str
) -> None:
    with psycopg.connect(cluster.conninfo(READER, password=first_run), autocommit=True) as conn:
        # Read-only transactions are only the default; the privileges must hold without it.
        conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE")
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute(statement.format(table=table))
    with psycopg.connect(cluster.conninfo()) as conn:
        assert conn.execute(f"SELECT id, note FROM {table}").fetchall() == [(1, "one")]


def test_a_second_run_changes_nothing(lab: Path, first_run: str) -> None:
    assert changed(run_play(lab)) == 0
    assert kept_password(lab) == first_run


def test_a_given_password_replaces_the_kept_one(lab: Path, cluster: Cluster, first_run: str) -> None:
    given = "a-given-grafana-password-0123"
    assert changed(run_play(lab, xaclab_server_grafana_db_password=given)) > 0
    assert kept_password(lab) == given
    with psycopg.connect(cluster.conninfo(READER, password=given)) as conn:
        assert conn.execute("SELECT count(*) FROM made_after").fetchone() == (1,)
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(cluster.conninfo(READER, password=first_run))
    assert changed(run_play(lab, xaclab_server_grafana_db_password=given)) == 0
    # Without the variable, the kept password stays.
    assert changed(run_play(lab)) == 0
    assert kept_password(lab) == given
