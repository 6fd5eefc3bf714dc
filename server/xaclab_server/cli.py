"""``xaclab-server``: wait for the database, run ``alembic upgrade head``, then serve.

Options: ``--host`` (default 127.0.0.1), ``--port`` (default ``$PORT`` or 8000),
``--migrate-only``. Everything else comes from ``XACLAB_*`` variables
(:mod:`xaclab_server.core.config`).
"""

import argparse
import logging
import os
import sys
import time
from collections.abc import Sequence

import uvicorn
from pydantic import ValidationError
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from xaclab_server.core.db import make_engine
from xaclab_server.core.migrations import upgrade_head

log = logging.getLogger("xaclab_server")

DB_WAIT_SECONDS = 60


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
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        # Imported here so that missing settings give a message, not a traceback.
        from xaclab_server.core.config import settings
    except ValidationError as exc:
        # Without the input values: they may hold the secret.
        for error in exc.errors(include_input=False, include_url=False):
            field = ".".join(str(p) for p in error["loc"]) or "settings"
            sys.stderr.write(f"xaclab-server: {field}: {error['msg']}\n")
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
    )
    return 0


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
