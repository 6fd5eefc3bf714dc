"""Real processes for the system tests and the benchmarks (server/bench/), with
the server's own settings on top of xaclab_testsupport's processes.

:class:`PgCluster` is a cluster of one's own whose new databases are migrated;
:class:`ServerProcess` is the server with the system tests' settings (test
mode, text logs, no scheduler), its data beside its log; :func:`admin_token`
makes an admin directly in the database.
"""

import os
from pathlib import Path

import xaclab_testsupport
from playwright.sync_api import Page
from xaclab_testsupport import REPO as REPO
from xaclab_testsupport import create_database
from xaclab_testsupport import libpq_url as libpq_url

from xaclab_server.core.db import make_engine, make_sessionmaker
from xaclab_server.core.migrations import upgrade_head
from xaclab_server.models.base import utcnow
from xaclab_server.services import accounts
from xaclab_server.services.audit import COMMAND_LINE

REGISTRATION_TOKEN = os.environ.get(
    "XACLAB_REGISTRATION_TOKEN", "test-registration-token-0123456789"
)


class PgCluster(xaclab_testsupport.PgCluster):
    """A throw-away cluster; ``url(db)`` names one of its databases."""

    def create_database(self, name: str) -> str:
        """A new, migrated database."""
        url = create_database(self.url(), name)
        upgrade_head(url)
        return url


class ServerProcess(xaclab_testsupport.ServerProcess):
    """The server on ``database_url``, its log in ``log_path``; ``env`` on top."""

    def __init__(self, database_url: str, log_path: Path, **env: str) -> None:
        settings = {
            "XACLAB_ENV": "test",
            "XACLAB_LOG_FORMAT": "text",
            "XACLAB_SCHEDULER_SECONDS": "0",
            **env,
        }
        super().__init__(
            log_path.parent,
            database_url=database_url,
            registration_token=REGISTRATION_TOKEN,
            env=settings,
            log_path=log_path,
        )


ADMIN_PASSWORD = "live-password-0123"  # of the admins admin_token creates: a browser logs in


def admin_token(database_url: str, username: str = "admin") -> str:
    """Create an admin directly in the database and return an API token of theirs."""
    engine = make_engine(database_url)
    try:
        with make_sessionmaker(engine)() as session:
            user = accounts.create_user(
                session=session,
                username=username,
                password=ADMIN_PASSWORD,
                role="admin",
                actor=COMMAND_LINE,
                now=utcnow(),
            )
            _row, token = accounts.create_api_token(
                session=session, user=user, name="live", actor=COMMAND_LINE, now=utcnow()
            )
            return token
    finally:
        engine.dispose()


def browser_log_in(page: Page, base_url: str, username: str = "admin") -> None:
    """Log a headless browser in as an admin admin_token created, through the login form."""
    page.goto(f"{base_url}/login")
    page.fill("#username", username)
    page.fill("#password", ADMIN_PASSWORD)
    page.click("#login-submit")
    page.wait_for_selector("[data-testid='whoami']")
