import pytest
from pydantic import ValidationError

from xaclab_server.core.config import Settings, normalize_database_url


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
