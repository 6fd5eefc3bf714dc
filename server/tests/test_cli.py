"""The console script refuses bad settings without echoing the secret, and migrates."""

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from tests.helpers import result_record
from xaclab_server.core.db import make_engine, make_sessionmaker
from xaclab_server.models import Job, Machine, Result, Run, Series
from xaclab_server.services import accounts
from xaclab_server.services.machines import register_machine
from xaclab_server.services.results import store_upload


def run_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("XACLAB_")}
    return subprocess.run(
        [sys.executable, "-m", "xaclab_server.cli", *args],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_placeholder_token_is_refused_without_echoing_it(tmp_path: Path) -> None:
    done = run_cli(
        {"XACLAB_REGISTRATION_TOKEN": "s3cr3t-shor", "XACLAB_DATA_DIR": str(tmp_path)},
        "--migrate-only",
    )
    assert done.returncode == 2
    assert "shorter than 12" in done.stderr or "placeholder" in done.stderr
    assert "s3cr3t-shor" not in done.stderr


def test_missing_token_is_refused() -> None:
    done = run_cli({}, "--migrate-only")
    assert done.returncode == 2
    assert "registration_token: Field required" in done.stderr


def test_migrate_only_creates_the_sqlite_database(tmp_path: Path) -> None:
    done = run_cli(
        {
            "XACLAB_REGISTRATION_TOKEN": "a-long-random-token-for-tests",
            "XACLAB_DATA_DIR": str(tmp_path / "data"),
        },
        "--migrate-only",
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "data" / "xaclab.sqlite3").exists()


def test_secrets_come_from_files(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("a-long-random-token-from-a-file\n")
    (tmp_path / "admin").write_text("an admin password from a file\n")
    data = tmp_path / "data"
    env = {
        "XACLAB_REGISTRATION_TOKEN_FILE": str(tmp_path / "token"),
        "XACLAB_DATA_DIR": str(data),
        "XACLAB_ADMIN_PASSWORD_FILE": str(tmp_path / "admin"),
    }
    done = run_cli(env, "create-admin", "--username", "boss")
    assert done.returncode == 0, done.stderr
    engine = make_engine(f"sqlite:///{data / 'xaclab.sqlite3'}")
    try:
        with make_sessionmaker(engine)() as session:
            assert accounts.authenticate(
                session=session, username="boss", password="an admin password from a file"
            )
            assert not accounts.authenticate(
                session=session, username="boss", password="an admin password from a file\n"
            )
    finally:
        engine.dispose()


def test_a_secret_and_its_file_together_are_refused_without_echoing_them(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("token-in-the-file-0123456789\n")
    done = run_cli(
        {
            "XACLAB_REGISTRATION_TOKEN": "token-in-the-environment-0123456789",
            "XACLAB_REGISTRATION_TOKEN_FILE": str(tmp_path / "token"),
            "XACLAB_DATA_DIR": str(tmp_path),
        },
        "--migrate-only",
    )
    assert done.returncode == 2
    both = "XACLAB_REGISTRATION_TOKEN and XACLAB_REGISTRATION_TOKEN_FILE are both set"
    assert both in done.stderr
    assert "0123456789" not in done.stderr


def test_an_unreadable_admin_password_file_is_refused(tmp_path: Path) -> None:
    done = run_cli(
        {
            "XACLAB_REGISTRATION_TOKEN": "a-long-random-token-for-tests",
            "XACLAB_DATA_DIR": str(tmp_path / "data"),
            "XACLAB_ADMIN_PASSWORD_FILE": str(tmp_path / "missing"),
        },
        "create-admin",
        "--username",
        "boss",
    )
    assert done.returncode == 2
    assert "XACLAB_ADMIN_PASSWORD_FILE: cannot read" in done.stderr
    assert "Traceback" not in done.stderr


def _store(session: Session, machine: Machine, upload_id: str, record: dict[str, Any]) -> None:
    """One result uploaded by ``machine`` in a run and job of its own."""
    run = Run(machine_id=machine.id, suite="page-touch", profile="quick", params={})
    session.add(run)
    session.flush()
    job = Job(run_id=run.id, machine_id=machine.id, suite="page-touch", profile="quick", params={})
    session.add(job)
    session.flush()
    store_upload(session=session, job=job, upload_id=upload_id, results=[record])


def test_judge_results_judges_what_was_stored_unjudged(tmp_path: Path) -> None:
    """``judge-results`` flags results whose flags are NULL (stored before 0007) and says how
    many; a second call finds none."""
    data = tmp_path / "data"
    env = {
        "XACLAB_REGISTRATION_TOKEN": "a-long-random-token-for-tests",
        "XACLAB_DATA_DIR": str(data),
    }
    assert run_cli(env, "--migrate-only").returncode == 0
    engine = make_engine(f"sqlite:///{data / 'xaclab.sqlite3'}")
    try:
        with make_sessionmaker(engine)() as session:
            machine, _token = register_machine(session=session, name="old", fingerprint={})
            _store(session, machine, "u-1", result_record(samples=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
            session.execute(update(Result).values(flags=None, median_ci_low=None))
            session.commit()
        done = run_cli(env, "judge-results")
        assert done.returncode == 0, done.stderr
        assert done.stdout == "judged 1 results\n"
        with make_sessionmaker(engine)() as session:
            judged = session.scalars(select(Result)).one()
            assert judged.flags is not None and "high_variation" in judged.flags
            assert (judged.median_ci_low, judged.median_ci_high) == (1.0, 6.0)
        assert run_cli(env, "judge-results").stdout == "judged 0 results\n"
    finally:
        engine.dispose()


def test_build_series_places_what_was_stored_before_series(tmp_path: Path) -> None:
    """``build-series`` gives results stored before 0009 their series, marked for the
    detector, and says how many; a second call finds none."""
    data = tmp_path / "data"
    env = {
        "XACLAB_REGISTRATION_TOKEN": "a-long-random-token-for-tests",
        "XACLAB_DATA_DIR": str(data),
    }
    assert run_cli(env, "--migrate-only").returncode == 0
    engine = make_engine(f"sqlite:///{data / 'xaclab.sqlite3'}")
    try:
        with make_sessionmaker(engine)() as session:
            machine, _token = register_machine(session=session, name="old", fingerprint={})
            for upload_id in ("u-1", "u-2"):
                _store(session, machine, upload_id, result_record())
            session.execute(update(Result).values(series_id=None))
            session.execute(delete(Series))
            session.commit()
        done = run_cli(env, "build-series")
        assert done.returncode == 0, done.stderr
        assert done.stdout == "placed 2 results in their series\n"
        with make_sessionmaker(engine)() as session:
            (series,) = session.scalars(select(Series)).all()
            assert series.pending and series.params["n"] == 1
            assert {r.series_id for r in session.scalars(select(Result))} == {series.id}
        assert run_cli(env, "build-series").stdout == "placed 0 results in their series\n"
    finally:
        engine.dispose()
