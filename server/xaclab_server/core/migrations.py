"""Running the Alembic migrations (server/alembic/) from code, as start-up does."""

from pathlib import Path

from alembic.config import Config

from alembic import command
from xaclab_server.core.paths import PACKAGE_DIR

ALEMBIC_DIR: Path = PACKAGE_DIR / "alembic"


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(ALEMBIC_DIR))
    # Passed as an attribute, not an option: configparser would read '%' in a password.
    config.attributes["database_url"] = url
    return config


def upgrade_head(url: str) -> None:
    command.upgrade(alembic_config(url), "head")
