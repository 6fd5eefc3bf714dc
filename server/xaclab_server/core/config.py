"""Settings, read from the environment with the prefix ``XACLAB_``.

``XACLAB_REGISTRATION_TOKEN`` is a secret with no default; outside
``XACLAB_ENV=development`` an obvious placeholder is refused, so a server never
runs in a lab with the token from an example file.

Each secret may instead come from a file, as container secrets do: when
``XACLAB_<NAME>_FILE`` is set, the value is that file's content without its
trailing newline (``SECRET_SETTINGS``; ``XACLAB_ADMIN_PASSWORD`` of
``create-admin`` too).  Setting both ``XACLAB_<NAME>`` and
``XACLAB_<NAME>_FILE``, or naming a file that cannot be read or is empty, is
an error (:func:`xaclab_contracts.secret_env.secret_from_env`, which the agent
uses for its registration token too).
"""

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from xaclab_contracts.files import RESULT_SCHEMA, SUITES_DIR
from xaclab_contracts.secret_env import SecretFileError, secret_from_env

__all__ = [
    "MIN_SECRET_LENGTH",
    "PLACEHOLDER_SECRETS",
    "SECRET_SETTINGS",
    "SecretFileError",
    "Settings",
    "normalize_database_url",
    "secret_from_env",
    "settings",
]

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
# The settings that may come from XACLAB_<NAME>_FILE.
SECRET_SETTINGS = ("registration_token", "database_url", "database_password")


class Settings(BaseSettings):
    # Errors never print the input: it holds the secrets.
    model_config = SettingsConfigDict(
        env_prefix="XACLAB_", extra="ignore", hide_input_in_errors=True
    )

    env: Literal["development", "test", "production"] = "production"
    registration_token: SecretStr
    # PostgreSQL (postgresql+psycopg://...) when given; otherwise an embedded SQLite file.
    database_url: str | None = None
    # The password for database_url's user, when the URL carries none (so that
    # the URL can be plain configuration and the password a secret file).
    database_password: SecretStr | None = None
    data_dir: Path = Path(".")
    suites_dir: Path = SUITES_DIR
    result_schema_path: Path = RESULT_SCHEMA
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
    # A login session ends session_hours after the login (absolute) or
    # session_idle_minutes after its last request (idle), whichever is first.
    session_hours: float = Field(default=12, gt=0, le=24 * 90)
    session_idle_minutes: float = Field(default=120, gt=0, le=24 * 60 * 90)
    # Mark the session cookie Secure; on by itself when the server serves TLS,
    # turn it on when a TLS proxy fronts the server.
    secure_cookies: bool = False
    # TLS (docs/server.md, "TLS"): with both files the server serves HTTPS.
    tls_cert_file: Path | None = None
    tls_key_file: Path | None = None
    # Plain HTTP on an address other than loopback is refused unless this is
    # true (a TLS proxy on the same host, a container published on loopback);
    # the server then logs a warning at start-up.
    allow_plain_http: bool = False
    # Throttling of failed logins and registrations (docs/server.md,
    # "Throttling"): a key (an account, a client address) may fail this many
    # times; each further failure blocks it for throttle_delay_seconds, doubled
    # per failure up to throttle_max_delay_seconds.  Failures are forgotten
    # throttle_forget_seconds after a key's last one.
    login_free_failures: int = Field(default=5, ge=1, le=1000)
    login_address_free_failures: int = Field(default=20, ge=1, le=100000)
    registration_free_failures: int = Field(default=5, ge=1, le=1000)
    throttle_delay_seconds: float = Field(default=2, gt=0, le=3600)
    throttle_max_delay_seconds: float = Field(default=900, gt=0, le=7 * 86400)
    throttle_forget_seconds: float = Field(default=3600, gt=0, le=30 * 86400)
    # How often this process looks for due schedules; 0 turns its scheduler off.
    scheduler_seconds: float = Field(default=15, ge=0, le=3600)
    # How often a run's event stream (SSE) looks at the database.
    events_poll_seconds: float = Field(default=1.0, gt=0, le=30)
    # Change points (docs/change-points.md): how often this process looks for series
    # that new results changed (each upload also wakes it), bisections to advance and
    # webhook messages to send; 0 turns the watcher off.
    watch_seconds: float = Field(default=5, ge=0, le=3600)
    change_test: Literal["t", "rank"] = "rank"
    change_max_pvalue: float = Field(default=0.001, gt=0, lt=1)
    change_min_percent: float = Field(default=3.0, ge=0, le=1000)
    change_noise_factor: float = Field(default=1.0, ge=0, le=100)
    change_min_points: int = Field(default=3, ge=1, le=1000)
    change_window: int = Field(default=50, ge=4, le=1000)
    change_history: int = Field(default=500, ge=10, le=100000)
    # A timing series is also judged against its runs' other configurations
    # (services/reference_view.py); the series itself is then judged at this
    # stricter p, so that the two views together raise no more false alerts.
    change_views: bool = True
    change_raw_max_pvalue: float = Field(default=0.0001, gt=0, lt=1)
    # Webhook deliveries: per-post timeout, the first retry's delay (tripled each
    # time) and the attempts before a message is given up.
    webhook_timeout_seconds: float = Field(default=5, gt=0, le=120)
    webhook_retry_seconds: float = Field(default=5, gt=0, le=3600)
    webhook_attempts: int = Field(default=7, ge=1, le=50)
    # The server's own URL as people reach it, for absolute links in webhook messages.
    public_url: str | None = None
    # A git clone holding libxac (playbooks: roles/xaclab_libxac), to check the
    # revisions runs ask for and to bisect; its libxac lives under libxac_git_path.
    libxac_git_dir: Path | None = None
    libxac_git_path: str = "libxac"
    # Bisection: runs per revision while its side is in doubt, and the confidence
    # below which a side is in doubt.
    bisect_max_runs: int = Field(default=3, ge=1, le=20)
    bisect_confidence: float = Field(default=0.95, gt=0.5, lt=1)
    log_format: Literal["json", "text"] = "json"

    @model_validator(mode="before")
    @classmethod
    def _read_secret_files(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for field in SECRET_SETTINGS:
            name = f"XACLAB_{field.upper()}"
            if os.environ.get(f"{name}_FILE"):
                value = secret_from_env(name)
                # A value given to the constructor wins, as it does over the environment.
                data.setdefault(field, value)
        return data

    @model_validator(mode="after")
    def _password_needs_a_postgresql_url_without_one(self) -> "Settings":
        if self.database_password is None:
            return self
        try:
            url = make_url(normalize_database_url(self.database_url or "sqlite://"))
        except ArgumentError:
            raise ValueError("XACLAB_DATABASE_URL is not a database URL") from None
        if url.get_backend_name() != "postgresql":
            raise ValueError("XACLAB_DATABASE_PASSWORD needs a postgresql:// XACLAB_DATABASE_URL")
        if url.password is not None:
            raise ValueError(
                "XACLAB_DATABASE_URL holds a password and XACLAB_DATABASE_PASSWORD is set; "
                "give the password once"
            )
        return self

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

    @model_validator(mode="after")
    def _tls_needs_both_files(self) -> "Settings":
        if (self.tls_cert_file is None) != (self.tls_key_file is None):
            raise ValueError(
                "XACLAB_TLS_CERT_FILE and XACLAB_TLS_KEY_FILE go together; set both or neither"
            )
        if self.throttle_max_delay_seconds < self.throttle_delay_seconds:
            raise ValueError(
                "XACLAB_THROTTLE_MAX_DELAY_SECONDS is below XACLAB_THROTTLE_DELAY_SECONDS"
            )
        return self

    @property
    def tls_enabled(self) -> bool:
        return self.tls_cert_file is not None

    @property
    def cookies_secure(self) -> bool:
        return self.secure_cookies or self.tls_enabled

    @property
    def sqlalchemy_url(self) -> str:
        if self.database_url:
            url = normalize_database_url(self.database_url)
            if self.database_password is None:
                return url
            password = self.database_password.get_secret_value()
            return make_url(url).set(password=password).render_as_string(hide_password=False)
        return f"sqlite:///{(self.data_dir / 'xaclab.sqlite3').resolve()}"


def normalize_database_url(url: str) -> str:
    """Point bare PostgreSQL URLs at the psycopg 3 driver, the only one installed."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


settings = Settings()
