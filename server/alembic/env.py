"""Alembic environment: migrations for the tables in docs/database.md."""

import logging.config

from sqlalchemy import text

from alembic import context
from xaclab_server.core.db import make_engine
from xaclab_server.models import Base

config = context.config
LOCK_KEY = 0x78616C6162  # 'xalab'
if config.config_file_name is not None:
    logging.config.fileConfig(config.config_file_name, disable_existing_loggers=False)


def database_url() -> str:
    url = config.attributes.get("database_url")
    if isinstance(url, str):
        return url
    # Run by hand (`alembic upgrade head`): the server's own settings decide.
    from xaclab_server.core.config import settings

    return settings.sqlalchemy_url


def run_migrations_offline() -> None:
    context.configure(
        url=database_url(),
        target_metadata=Base.metadata,
        literal_binds=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = make_engine(database_url())
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=Base.metadata,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        with context.begin_transaction():
            if connection.dialect.name == "postgresql":
                # Several server processes may start at once; one migrates, the others wait.
                connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LOCK_KEY})
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
