"""Alembic: from an empty database to head and back, on SQLite and PostgreSQL."""

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, text

from alembic import command
from tests.conftest import PgDatabases
from xaclab_server.core.db import make_engine
from xaclab_server.core.migrations import alembic_config, upgrade_head
from xaclab_server.models import Base

TABLES = {
    "machines",
    "runs",
    "jobs",
    "uploads",
    "results",
    "job_logs",
    "users",
    "api_tokens",
    "login_sessions",
    "matrices",
    "schedules",
    "alembic_version",
}


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


def test_upgrade_from_0002_keeps_the_data(pg_databases: PgDatabases, tmp_path: Path) -> None:
    for url in (pg_databases.create(), f"sqlite:///{tmp_path / 'old.sqlite3'}"):
        command.upgrade(alembic_config(url), "0002")
        engine = make_engine(url)
        try:
            with engine.begin() as connection:
                connection.execute(
                    text(
                        "INSERT INTO machines (id, name, fingerprint, fingerprint_hash, "
                        "token_hash, "
                        "created_at, last_seen_at) VALUES (1, 'old', '{}', 'h', 't', "
                        "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                    )
                )
                connection.execute(
                    text(
                        "INSERT INTO runs (id, machine_id, suite, profile, params, status, "
                        "created_at) VALUES (1, 1, 'page-touch', 'quick', '{}', 'queued', "
                        "CURRENT_TIMESTAMP)"
                    )
                )
                connection.execute(
                    text(
                        "INSERT INTO jobs (id, run_id, machine_id, suite, profile, params, status, "
                        "progress, message, created_at) VALUES (1, 1, 1, 'page-touch', 'quick', "
                        "'{}', 'queued', 0, '', CURRENT_TIMESTAMP)"
                    )
                )
            upgrade_head(url)
            with engine.connect() as connection:
                approved = connection.execute(text("SELECT approved FROM machines")).scalar()
                run = connection.execute(text("SELECT matrix_id, suite FROM runs")).one()
            assert approved in (True, 1)  # registered with the token before approval existed
            assert tuple(run) == (None, "page-touch")
            indexes = {i["name"] for i in inspect(engine).get_indexes("results")}
            assert "ix_results_machine_id_suite_benchmark_created_at" in indexes
        finally:
            engine.dispose()
