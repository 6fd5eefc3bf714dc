"""Alembic: from an empty database to head and back, on SQLite and PostgreSQL."""

import json
from pathlib import Path
from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, inspect, text
from xaclab_contracts.fingerprint import fingerprint_hash

from alembic import command
from tests.conftest import PgDatabases
from xaclab_server.core.db import make_engine, make_sessionmaker
from xaclab_server.core.migrations import alembic_config, upgrade_head
from xaclab_server.models import Base, Result
from xaclab_server.services import validity
from xaclab_server.services.statistics import pack_samples

TABLES = {
    "machines",
    "machine_epochs",
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
    "auth_throttles",
    "audit_events",
    "baselines",
    "series",
    "change_points",
    "watch_settings",
    "webhook_deliveries",
    "bisections",
    "bisection_runs",
    "alembic_version",
}


# One result as revision 0004 stored it, with its machine, run, job and upload.
OLD_RESULT_ROWS = [
    "INSERT INTO machines (id, name, fingerprint, fingerprint_hash, token_hash, approved, "
    "created_at, last_seen_at) VALUES (1, 'old', :fp, 'h', 't', true, CURRENT_TIMESTAMP, "
    "CURRENT_TIMESTAMP)",
    "INSERT INTO runs (id, machine_id, suite, profile, params, status, created_at) "
    "VALUES (1, 1, 'page-touch', 'quick', '{}', 'succeeded', CURRENT_TIMESTAMP)",
    "INSERT INTO jobs (id, run_id, machine_id, suite, profile, params, status, progress, "
    "message, attempt, cancel_requested, created_at) VALUES (1, 1, 1, 'page-touch', "
    "'quick', '{}', 'succeeded', 1, '', 1, false, CURRENT_TIMESTAMP)",
    "INSERT INTO uploads (id, upload_id, job_id, received_at) "
    "VALUES (1, 'u', 1, CURRENT_TIMESTAMP)",
    "INSERT INTO results (id, upload_pk, job_id, run_id, machine_id, suite, benchmark, sut, "
    "metric, unit, better, params, n, mean, median, min, max, p99, samples, "
    "library_version, git_revision, env, created_at) VALUES (1, 1, 1, 1, 1, 'page-touch', "
    "'page_touch', 'libxac', 'time_per_page', 'us', 'lower', '{}', :n, :mean, :mean, :low, "
    ":high, :high, :samples, '0.1.0', 'abc', :env, CURRENT_TIMESTAMP)",
]


def _store_old_result(
    url: str, revision: str, samples: list[float], *, fingerprint: Any, env: Any
) -> Engine:
    """A database at ``revision`` holding OLD_RESULT_ROWS with these samples."""
    command.upgrade(alembic_config(url), revision)
    engine = make_engine(url)
    values = {
        "fp": json.dumps(fingerprint),
        "env": json.dumps(env),
        "samples": pack_samples(samples),
        "n": len(samples),
        "mean": sum(samples) / len(samples),
        "low": min(samples),
        "high": max(samples),
    }
    with engine.begin() as connection:
        for row in OLD_RESULT_ROWS:
            connection.execute(text(row), values)
    return engine


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
        assert {
            "n",
            "mean",
            "median",
            "min",
            "max",
            "stddev",
            "p99",
            "samples",
            "histogram",
            "env",
        } <= columns
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


def test_0005_adds_an_empty_histogram_column_and_drops_it_again(
    pg_databases: PgDatabases, tmp_path: Path
) -> None:
    """Results stored before 0005 keep their samples and get no histogram; a downgrade to
    0004 keeps them too."""
    packed = bytes.fromhex("000000000000f03f")
    for url in (pg_databases.create(), f"sqlite:///{tmp_path / 'old.sqlite3'}"):
        engine = _store_old_result(url, "0004", [1.0], fingerprint={}, env={})
        try:
            upgrade_head(url)
            with engine.connect() as connection:
                kept = connection.execute(text("SELECT samples, histogram FROM results")).one()
            assert (bytes(kept[0]), kept[1]) == (packed, None)
            command.downgrade(alembic_config(url), "0004")
            columns = {c["name"] for c in inspect(engine).get_columns("results")}
            assert "histogram" not in columns
            with engine.connect() as connection:
                again = connection.execute(text("SELECT samples FROM results")).scalar_one()
            assert bytes(again) == packed
        finally:
            engine.dispose()


def test_upgrade_to_0006_recomputes_fingerprint_hashes(
    pg_databases: PgDatabases, tmp_path: Path
) -> None:
    fingerprint = {"hostname": "lab-x", "cpu": {"model": "Xeon", "cores": 2}}
    for url in (pg_databases.create(), f"sqlite:///{tmp_path / 'hash.sqlite3'}"):
        command.upgrade(alembic_config(url), "0005")
        engine = make_engine(url)
        try:
            with engine.begin() as connection:
                connection.execute(
                    text(
                        "INSERT INTO machines (id, name, fingerprint, fingerprint_hash, "
                        "token_hash, approved, created_at, last_seen_at) VALUES "
                        "(1, 'old', :fp, 'whole-fingerprint-hash', 't', true, "
                        "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                    ),
                    {"fp": json.dumps(fingerprint)},
                )
            upgrade_head(url)
            with engine.connect() as connection:
                stored = connection.execute(text("SELECT fingerprint_hash FROM machines")).scalar()
            assert stored == fingerprint_hash(fingerprint)
            assert stored == fingerprint_hash({**fingerprint, "hostname": "renamed"})
        finally:
            engine.dispose()


def test_0008_keeps_open_sessions_and_counts_them_seen_at_their_start(
    pg_databases: PgDatabases, tmp_path: Path
) -> None:
    for url in (pg_databases.create(), f"sqlite:///{tmp_path / 'sessions.sqlite3'}"):
        command.upgrade(alembic_config(url), "0006")
        engine = make_engine(url)
        try:
            with engine.begin() as connection:
                connection.execute(
                    text(
                        "INSERT INTO users (id, username, password_hash, role, disabled, "
                        "created_at) VALUES (1, 'ann', 'h', 'admin', false, CURRENT_TIMESTAMP)"
                    )
                )
                connection.execute(
                    text(
                        "INSERT INTO login_sessions (id, user_id, token_hash, csrf_token, "
                        "created_at, expires_at) VALUES (1, 1, 't', 'c', "
                        "'2026-11-20 10:00:00+00:00', '2026-11-20 22:00:00+00:00')"
                    )
                )
            upgrade_head(url)
            with engine.connect() as connection:
                seen, made = connection.execute(
                    text("SELECT last_seen_at, created_at FROM login_sessions")
                ).one()
            assert seen == made
            command.downgrade(alembic_config(url), "0006")
            assert "last_seen_at" not in {
                c["name"] for c in inspect(engine).get_columns("login_sessions")
            }
            assert "audit_events" not in inspect(engine).get_table_names()
        finally:
            engine.dispose()


def test_0007_leaves_old_results_not_judged_until_judge_results(
    pg_databases: PgDatabases, tmp_path: Path
) -> None:
    """Old results get epoch 1 and NULL flags (shown as "not judged"); their machine gets
    epoch 1 with its fingerprint; ``xaclab-server judge-results`` then judges them from the
    stored env and samples."""
    fingerprint = {"cpu": {"model": "Xeon", "cores": 2}, "kernel": {"release": "6.1.0"}}
    noisy_env = {**fingerprint, "hygiene": {"noisy": True}}
    for url in (pg_databases.create(), f"sqlite:///{tmp_path / 'old.sqlite3'}"):
        engine = _store_old_result(url, "0006", [1.0, 2.0], fingerprint=fingerprint, env=noisy_env)
        try:
            upgrade_head(url)
            with engine.connect() as connection:
                result = connection.execute(text("SELECT epoch, flags FROM results")).one()
                machine = connection.execute(text("SELECT epoch FROM machines")).scalar()
                epoch = connection.execute(
                    text("SELECT machine_id, epoch, fingerprint_hash FROM machine_epochs")
                ).one()
            assert tuple(result) == (1, None) and machine == 1
            assert tuple(epoch) == (1, 1, "h")
            with make_sessionmaker(engine)() as session:
                assert validity.judge_stored(session=session) == 1
                assert validity.judge_stored(session=session) == 0
                judged = session.get_one(Result, 1)
                assert set(judged.flags or {}) == {"noisy", "too_few_samples", "high_variation"}
                assert judged.median_ci_low is None  # two samples: no interval
        finally:
            engine.dispose()
