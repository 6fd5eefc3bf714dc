"""A lab machine, known by the name its agent registered with.

Invariants: ``name`` is unique; ``token_hash`` is the SHA-256 of the agent's
current token (re-registering replaces it, so the old token stops working);
the token itself is never stored.  ``approved`` is false for a machine that
registered without the registration token: its agent may not claim work
until an admin approves it.
"""

from datetime import datetime
from typing import Any

from sqlalchemy import Text, true
from sqlalchemy.orm import Mapped, mapped_column

from xaclab_server.models.base import Base, utcnow


class Machine(Base):
    __tablename__ = "machines"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(Text, unique=True)
    fingerprint: Mapped[dict[str, Any]]
    fingerprint_hash: Mapped[str] = mapped_column(Text)
    token_hash: Mapped[str] = mapped_column(Text, unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_seen_at: Mapped[datetime] = mapped_column(default=utcnow)
    approved: Mapped[bool] = mapped_column(default=True, server_default=true())
