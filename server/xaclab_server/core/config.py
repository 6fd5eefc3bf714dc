"""Settings, read from the environment with the prefix ``XACLAB_``.

``XACLAB_REGISTRATION_TOKEN`` is a secret with no default; outside
``XACLAB_ENV=development`` an obvious placeholder is refused, so a server never
runs in a lab with the token from an example file.
"""

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from xaclab_server.core.paths import PACKAGE_DIR

PLACEHOLDER_SECRETS = frozenset(
    {
        "changeme",
        "change-me",
        "change_me",
        "changethis",
        "secret",
        "password",
        "token",
        "placeholder",
        "example",
        "xxx",
        "test",
        "registration-token",
        "todo",
    }
)
MIN_SECRET_LENGTH = 12


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="XACLAB_", extra="ignore")

    env: Literal["development", "test", "production"] = "production"
    registration_token: SecretStr
    # PostgreSQL (postgresql+psycopg://...) when given; otherwise an embedded SQLite file.
    database_url: str | None = None
    data_dir: Path = Path(".")
    suites_dir: Path = PACKAGE_DIR / "suites"
    result_schema_path: Path = PACKAGE_DIR / "result-format.schema.json"
    max_body_bytes: int = Field(default=32 * 1024 * 1024, ge=1024)
    # How often this process's shared claim poller (services/notifier.py) asks the
    # database, in one query for every waiting claim, which machines have jobs queued
    # by another process; jobs queued by this process wake their claims at once.
    claim_poll_seconds: float = Field(default=1.0, gt=0, le=10)
    machine_online_seconds: int = Field(default=120, ge=1)
    # A running job whose last heartbeat is older than this has lost its agent:
    # it is requeued while its attempt count is below lease_max_attempts, then failed.
    lease_seconds: float = Field(default=300, gt=0)
    lease_max_attempts: int = Field(default=2, ge=1)
    # Accounts (docs/server.md, "Accounts"): whether pages and GET calls of the
    # user API answer without a login. Writes always need one.
    anonymous_read: bool = True
    session_hours: float = Field(default=12, gt=0, le=24 * 90)
    # Mark the session cookie Secure; turn on when a TLS proxy fronts the server.
    secure_cookies: bool = False
    # How often this process looks for due schedules; 0 turns its scheduler off.
    scheduler_seconds: float = Field(default=15, ge=0, le=3600)
    # How often a run's event stream (SSE) looks at the database.
    events_poll_seconds: float = Field(default=1.0, gt=0, le=30)
    log_format: Literal["json", "text"] = "json"

    @model_validator(mode="after")
    def _refuse_placeholder_secrets(self) -> "Settings":
        if self.env == "development":
            return self
        token = self.registration_token.get_secret_value().strip()
        lowered = token.lower()
        if lowered in PLACEHOLDER_SECRETS or "changeme" in lowered or "change-me" in lowered:
            raise ValueError(
                "XACLAB_REGISTRATION_TOKEN is a placeholder; set a random secret "
                "(e.g. `openssl rand -hex 32`) or XACLAB_ENV=development"
            )
        if len(token) < MIN_SECRET_LENGTH:
            raise ValueError(
                f"XACLAB_REGISTRATION_TOKEN is shorter than {MIN_SECRET_LENGTH} characters; "
                "set a random secret (e.g. `openssl rand -hex 32`) or XACLAB_ENV=development"
            )
        return self

    @property
    def sqlalchemy_url(self) -> str:
        if self.database_url:
            return normalize_database_url(self.database_url)
        return f"sqlite:///{(self.data_dir / 'xaclab.sqlite3').resolve()}"


def normalize_database_url(url: str) -> str:
    """Point bare PostgreSQL URLs at the psycopg 3 driver, the only one installed."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


settings = Settings()
