"""``xaclab-server``: wait for the database, run ``alembic upgrade head``, then serve.

Options: ``--host`` (default 127.0.0.1), ``--port`` (default ``$PORT`` or 8000),
``--migrate-only``. Everything else comes from ``XACLAB_*`` variables
(:mod:`xaclab_server.core.config`).  With ``XACLAB_TLS_CERT_FILE`` and
``XACLAB_TLS_KEY_FILE`` the server serves HTTPS; without them it serves
plain HTTP on a loopback address only, unless ``XACLAB_ALLOW_PLAIN_HTTP`` is
true (then it logs a warning).

``xaclab-server create-admin --username NAME [--api-token NAME]`` creates an
admin on first run (password from ``XACLAB_ADMIN_PASSWORD`` or the file
``XACLAB_ADMIN_PASSWORD_FILE`` names, standard input or a prompt) and
optionally prints a fresh API token for scripts.

``xaclab-server judge-results`` judges the results stored before validity flags
existed (their flags are NULL: "not judged") from their stored env and samples,
with the current rules (docs/validity.md), and prints how many it judged.

``xaclab-server build-series`` puts the results stored before series existed
(migration 0009) into their series, for change-point detection
(docs/change-points.md), and prints how many it placed.
"""

import argparse
import getpass
import logging
import os
import ssl
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import uvicorn
from pydantic import ValidationError
from sqlalchemy import text
from sqlalchemy.exc import OperationalError
from xaclab_contracts.loopback import is_loopback

from xaclab_server.core.db import make_engine, make_sessionmaker
from xaclab_server.core.logs import configure_logging
from xaclab_server.core.migrations import upgrade_head
from xaclab_server.models.base import utcnow
from xaclab_server.services import accounts, validity
from xaclab_server.services.audit import COMMAND_LINE

if TYPE_CHECKING:  # importing the module reads the settings, which main() does with care
    from xaclab_server.core.config import Settings

log = logging.getLogger("xaclab_server")

DB_WAIT_SECONDS = 60


def parse_create_admin(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="xaclab-server create-admin",
        description="Create an admin (first run). The password comes from XACLAB_ADMIN_PASSWORD "
        "(or the file XACLAB_ADMIN_PASSWORD_FILE names), else from standard input (one line), "
        "else from a prompt.",
    )
    parser.add_argument("--username", required=True)
    parser.add_argument(
        "--api-token",
        metavar="NAME",
        help="also create an API token called NAME and print it on standard output",
    )
    return parser.parse_args(argv)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="xaclab-server", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port",
        type=int,
        default=int(os.environ.get("PORT", "8000")),
        help="port to bind (default $PORT or 8000)",
    )
    parser.add_argument(
        "--migrate-only", action="store_true", help="upgrade the database schema and exit"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["create-admin"]:
        return create_admin(parse_create_admin(arguments[1:]))
    if arguments[:1] == ["judge-results"]:
        return judge_results()
    if arguments[:1] == ["build-series"]:
        return build_series()
    args = parse_args(arguments)
    log_config = configure_logging(os.environ.get("XACLAB_LOG_FORMAT", "json"))
    try:
        # Imported here so that missing settings give a message, not a traceback.
        from xaclab_server.core.config import settings
    except ValidationError as exc:
        # Without the input values: they may hold the secret.
        for error in exc.errors(include_input=False, include_url=False):
            field = ".".join(str(p) for p in error["loc"]) or "settings"
            sys.stderr.write(f"xaclab-server: {field}: {error['msg']}\n")
        return 2

    try:
        tls = tls_options(settings, args.host)
    except TransportRefused as exc:
        sys.stderr.write(f"xaclab-server: {exc}\n")
        return 2
    url = settings.sqlalchemy_url
    if url.startswith("sqlite"):
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    _wait_for_database(url)
    log.info("migrating the database to the newest schema")
    upgrade_head(url)
    if args.migrate_only:
        return 0

    from xaclab_server.app import create_app

    uvicorn.run(
        create_app(settings),
        host=args.host,
        port=args.port,
        timeout_graceful_shutdown=5,
        proxy_headers=False,
        log_config=log_config,
        **tls,
    )
    return 0


class TransportRefused(Exception):
    """The settings would serve secrets in clear text, or name TLS files that do not work."""


def tls_options(settings: "Settings", host: str) -> dict[str, Any]:
    """uvicorn's TLS arguments; plain HTTP off loopback only with the explicit opt-out."""
    if settings.tls_cert_file is not None and settings.tls_key_file is not None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        try:
            context.load_cert_chain(settings.tls_cert_file, settings.tls_key_file)
        except (OSError, ssl.SSLError) as exc:
            raise TransportRefused(
                f"XACLAB_TLS_CERT_FILE {settings.tls_cert_file} and XACLAB_TLS_KEY_FILE "
                f"{settings.tls_key_file} do not load as a certificate and its key: {exc}"
            ) from None
        log.info("serving HTTPS with the certificate %s", settings.tls_cert_file)
        return {
            "ssl_certfile": str(settings.tls_cert_file),
            "ssl_keyfile": str(settings.tls_key_file),
        }
    if is_loopback(host):
        return {}
    if not settings.allow_plain_http:
        raise TransportRefused(
            f"--host {host} is not a loopback address and no TLS certificate is set: passwords, "
            "session cookies and agent tokens would cross the network in clear text. Set "
            "XACLAB_TLS_CERT_FILE and XACLAB_TLS_KEY_FILE, bind 127.0.0.1, or, behind a TLS "
            "proxy of your own, set XACLAB_ALLOW_PLAIN_HTTP=true."
        )
    log.warning(
        "serving plain HTTP on %s, which is not a loopback address "
        "(XACLAB_ALLOW_PLAIN_HTTP=true): only safe behind a TLS proxy or on a port "
        "published on loopback",
        host,
    )
    return {}


def _admin_password() -> str:
    # Imported once the settings loaded: importing the module builds them.
    from xaclab_server.core.config import secret_from_env

    given = secret_from_env("XACLAB_ADMIN_PASSWORD")
    if given:
        return given
    if not sys.stdin.isatty():
        return sys.stdin.readline().rstrip("\n")
    first = getpass.getpass("Password for the new admin: ")
    if getpass.getpass("Again: ") != first:
        raise SystemExit("xaclab-server: the two passwords differ")
    return first


def create_admin(args: argparse.Namespace) -> int:
    """``xaclab-server create-admin``: no default password ever ships; the admin chooses it."""
    url = _migrated_database()
    if url is None:
        return 2
    try:
        password = _admin_password()
    except ValueError as exc:
        sys.stderr.write(f"xaclab-server: {exc}\n")
        return 2
    engine = make_engine(url)
    try:
        with make_sessionmaker(engine)() as session:
            try:
                user = accounts.create_user(
                    session=session,
                    username=args.username,
                    password=password,
                    role="admin",
                    actor=COMMAND_LINE,
                    now=utcnow(),
                )
                token = None
                if args.api_token:
                    _row, token = accounts.create_api_token(
                        session=session,
                        user=user,
                        name=args.api_token,
                        actor=COMMAND_LINE,
                        now=utcnow(),
                    )
            except accounts.AccountError as exc:
                sys.stderr.write(f"xaclab-server: {exc}\n")
                return 1
    finally:
        engine.dispose()
    log.info("created the admin %s", args.username)
    if token:
        sys.stdout.write(token + "\n")
    return 0


def judge_results() -> int:
    """``xaclab-server judge-results``: flags for every result that has none, in batches."""
    url = _migrated_database()
    if url is None:
        return 2
    engine = make_engine(url)
    judged = 0
    try:
        with make_sessionmaker(engine)() as session:
            while batch := validity.judge_stored(session=session):
                judged += batch
    finally:
        engine.dispose()
    sys.stdout.write(f"judged {judged} results\n")
    return 0


def build_series() -> int:
    """``xaclab-server build-series``: a series for every result that has none, in batches."""
    url = _migrated_database()
    if url is None:
        return 2
    from xaclab_contracts.roles import param_roles

    from xaclab_server.core.config import settings
    from xaclab_server.services.series import attach_stored
    from xaclab_server.services.suites import load_suites

    roles = param_roles(load_suites(settings.suites_dir))
    engine = make_engine(url)
    placed = 0
    try:
        with make_sessionmaker(engine)() as session:
            while batch := attach_stored(session=session, roles=roles):
                placed += batch
    finally:
        engine.dispose()
    sys.stdout.write(f"placed {placed} results in their series\n")
    return 0


def _migrated_database() -> str | None:
    """For the one-off commands: the database URL once it answers and is migrated, or None
    (after saying why) when the settings are refused."""
    configure_logging("text")
    try:
        from xaclab_server.core.config import settings
    except ValidationError as exc:
        sys.stderr.write(f"xaclab-server: {exc.errors(include_input=False)[0]['msg']}\n")
        return None
    url = settings.sqlalchemy_url
    if url.startswith("sqlite"):
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    _wait_for_database(url)
    upgrade_head(url)
    return url


def _wait_for_database(url: str) -> None:
    engine = make_engine(url)
    deadline = time.monotonic() + DB_WAIT_SECONDS
    try:
        while True:
            try:
                with engine.connect() as connection:
                    connection.execute(text("SELECT 1"))
                return
            except OperationalError:
                if time.monotonic() > deadline:
                    raise
                log.info("waiting for the database")
                time.sleep(1)
    finally:
        engine.dispose()


if __name__ == "__main__":
    raise SystemExit(main())
