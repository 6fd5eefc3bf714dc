"""The console script refuses bad settings without echoing the secret, and migrates."""

import os
import subprocess
import sys
from pathlib import Path


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
