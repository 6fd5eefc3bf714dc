"""Alembic: from an empty database to head and back, on SQLite and PostgreSQL."""

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from alembic import command
from tests.conftest import PgDatabases
from xaclab_server.core.db import make_engine
from xaclab_server.core.migrations import alembic_config, upgrade_head
from xaclab_server.models import Base

TABLES = {"machines", "runs", "jobs", "uploads", "results", "alembic_version"}


def check_upgrade_from_empty(url: str) -> None:
    upgrade_head(url)
    engine = make_engine(url)
    try:
        assert set(inspect(engine).get_table_names()) == TABLES
        with engine.connect() as connection:
            context = MigrationContext.configure(connection)
            # The models and the migrations describe the same schema.
            assert compare_metadata(context, Base.metadata) == []
        columns = {c["name"] for c in inspect(engine).get_columns("results")}
        assert {"n", "mean", "median", "min", "max", "stddev", "p99", "samples", "env"} <= columns
        command.downgrade(alembic_config(url), "base")
        assert set(inspect(engine).get_table_names()) == {"alembic_version"}
        upgrade_head(url)
    finally:
        engine.dispose()


def test_sqlite_upgrade_from_empty(tmp_path: Path) -> None:
    check_upgrade_from_empty(f"sqlite:///{tmp_path / 'fresh.sqlite3'}")


def test_postgresql_upgrade_from_empty(pg_databases: PgDatabases) -> None:
    url = pg_databases.create()
    check_upgrade_from_empty(url)
    engine = make_engine(url)
    try:
        types = {c["name"]: c["type"] for c in inspect(engine).get_columns("results")}
        assert str(types["params"]) == "JSONB"
        assert str(types["samples"]) == "BYTEA"
        assert getattr(types["created_at"], "timezone", False) is True
    finally:
        engine.dispose()
