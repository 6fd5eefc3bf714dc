from pathlib import Path

import pytest
from pydantic import ValidationError
from sqlalchemy.engine import make_url

from xaclab_server.core.config import (
    SECRET_SETTINGS,
    SecretFileError,
    Settings,
    normalize_database_url,
    secret_from_env,
)


@pytest.mark.parametrize("token", ["changeme", "CHANGEME", "secret", "short"])
def test_placeholder_tokens_are_refused_outside_development(token: str) -> None:
    with pytest.raises(ValidationError, match="XACLAB_REGISTRATION_TOKEN"):
        Settings(registration_token=token, env="production")
    Settings(registration_token=token, env="development")


def test_token_is_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XACLAB_REGISTRATION_TOKEN", raising=False)
    with pytest.raises(ValidationError, match="registration_token"):
        Settings()


def test_sqlite_is_the_embedded_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XACLAB_DATABASE_URL", raising=False)
    settings = Settings(registration_token="a-long-random-token-123", data_dir="/srv/x")
    assert settings.sqlalchemy_url == "sqlite:////srv/x/xaclab.sqlite3"


def test_postgres_urls_use_psycopg() -> None:
    assert normalize_database_url("postgresql://u@h/d") == "postgresql+psycopg://u@h/d"
    assert normalize_database_url("postgres://u@h/d") == "postgresql+psycopg://u@h/d"
    assert normalize_database_url("sqlite:///x") == "sqlite:///x"


def test_secret_from_env_reads_the_variable_or_the_file(tmp_path: Path) -> None:
    secret = tmp_path / "token.txt"
    secret.write_text("from-a-file-0123456789\n\n")
    assert secret_from_env("XACLAB_X", {"XACLAB_X": "direct"}) == "direct"
    assert secret_from_env("XACLAB_X", {"XACLAB_X_FILE": str(secret)}) == "from-a-file-0123456789"
    assert secret_from_env("XACLAB_X", {"XACLAB_X": "", "XACLAB_X_FILE": str(secret)}) == (
        "from-a-file-0123456789"
    )
    assert secret_from_env("XACLAB_X", {}) is None
    assert secret_from_env("XACLAB_X", {"XACLAB_X": "", "XACLAB_X_FILE": ""}) is None
    # Only the line ends at the end go: inner and leading characters are the secret's.
    secret.write_text(" a b\r\n")
    assert secret_from_env("XACLAB_X", {"XACLAB_X_FILE": str(secret)}) == " a b"


def test_secret_from_env_refuses_both_and_bad_files(tmp_path: Path) -> None:
    secret = tmp_path / "token.txt"
    secret.write_text("from-a-file-0123456789\n")
    with pytest.raises(SecretFileError, match="XACLAB_X and XACLAB_X_FILE are both set"):
        secret_from_env("XACLAB_X", {"XACLAB_X": "direct", "XACLAB_X_FILE": str(secret)})
    with pytest.raises(SecretFileError, match=r"X_FILE: cannot read .*nope\.txt: No such file"):
        secret_from_env("XACLAB_X", {"XACLAB_X_FILE": str(tmp_path / "nope.txt")})
    with pytest.raises(SecretFileError, match="cannot read .*: Is a directory"):
        secret_from_env("XACLAB_X", {"XACLAB_X_FILE": str(tmp_path)})
    secret.write_text("\n")
    with pytest.raises(SecretFileError, match="is empty"):
        secret_from_env("XACLAB_X", {"XACLAB_X_FILE": str(secret)})


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No XACLAB_ secret in the environment but what a test sets."""
    for field in SECRET_SETTINGS:
        monkeypatch.delenv(f"XACLAB_{field.upper()}", raising=False)
        monkeypatch.delenv(f"XACLAB_{field.upper()}_FILE", raising=False)
    return monkeypatch


def test_secret_settings_come_from_files(tmp_path: Path, secret_env: pytest.MonkeyPatch) -> None:
    (tmp_path / "token").write_text("token-from-a-file-0123456789\n")
    (tmp_path / "url").write_text("postgresql://xaclab@db:5432/xaclab\n")
    (tmp_path / "password").write_text("p@ss/w%rd:1\n")
    secret_env.setenv("XACLAB_REGISTRATION_TOKEN_FILE", str(tmp_path / "token"))
    secret_env.setenv("XACLAB_DATABASE_URL_FILE", str(tmp_path / "url"))
    secret_env.setenv("XACLAB_DATABASE_PASSWORD_FILE", str(tmp_path / "password"))
    settings = Settings()
    assert settings.registration_token.get_secret_value() == "token-from-a-file-0123456789"
    url = make_url(settings.sqlalchemy_url)
    assert (url.drivername, url.username, url.host, url.port, url.database) == (
        "postgresql+psycopg",
        "xaclab",
        "db",
        5432,
        "xaclab",
    )
    assert url.password == "p@ss/w%rd:1"
    # An explicit argument wins over the file, as it does over the environment.
    given = Settings(registration_token="an-argument-0123456789").registration_token
    assert given.get_secret_value() == "an-argument-0123456789"


@pytest.mark.parametrize("field", SECRET_SETTINGS)
def test_a_secret_and_its_file_together_are_refused_without_echoing_it(
    tmp_path: Path, secret_env: pytest.MonkeyPatch, field: str
) -> None:
    name = f"XACLAB_{field.upper()}"
    (tmp_path / "secret").write_text("postgresql://u@h/file-secret-0123456789\n")
    secret_env.setenv("XACLAB_REGISTRATION_TOKEN", "env-secret-0123456789")
    secret_env.setenv(name, "postgresql://u@h/env-secret-0123456789")
    secret_env.setenv(f"{name}_FILE", str(tmp_path / "secret"))
    with pytest.raises(ValidationError, match=f"{name} and {name}_FILE are both set") as caught:
        Settings()
    assert "secret-0123456789" not in str(caught.value)


def test_an_unreadable_secret_file_is_refused(
    tmp_path: Path, secret_env: pytest.MonkeyPatch
) -> None:
    secret_env.setenv("XACLAB_REGISTRATION_TOKEN_FILE", str(tmp_path / "missing"))
    with pytest.raises(ValidationError, match="XACLAB_REGISTRATION_TOKEN_FILE: cannot read"):
        Settings()


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        (None, "needs a postgresql:// XACLAB_DATABASE_URL"),
        ("sqlite:///x.sqlite3", "needs a postgresql:// XACLAB_DATABASE_URL"),
        ("postgresql://u:inline@h/d", "holds a password and XACLAB_DATABASE_PASSWORD is set"),
    ],
)
def test_database_password_needs_a_postgresql_url_without_one(
    secret_env: pytest.MonkeyPatch, url: str | None, reason: str
) -> None:
    with pytest.raises(ValidationError, match=reason) as caught:
        Settings(
            registration_token="a-long-random-token-123",
            database_url=url,
            database_password="a-database-password",
        )
    assert "a-database-password" not in str(caught.value)
