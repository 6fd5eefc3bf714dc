"""A person (or a script's owner) who uses the user API and the web UI.

Invariants: ``username`` is unique; ``password_hash`` is an argon2id hash
(never the password); ``role`` is one of :data:`ROLES`, each including the
rights of the ones before it: a viewer reads, an operator also triggers and
cancels runs and schedules, an admin also approves agents, rotates their
tokens and manages users.  A disabled user can neither log in nor use a token.
"""

from datetime import datetime

from sqlalchemy import Text, false
from sqlalchemy.orm import Mapped, mapped_column

from xaclab_server.models.base import Base, utcnow

ROLES = ("viewer", "operator", "admin")


def role_at_least(role: str, needed: str) -> bool:
    return ROLES.index(role) >= ROLES.index(needed)


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(Text, unique=True)
    password_hash: Mapped[str] = mapped_column(Text)
    role: Mapped[str] = mapped_column(Text)
    disabled: Mapped[bool] = mapped_column(default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_login_at: Mapped[datetime | None]
