"""A lab machine, known by the name its agent registered with.

Invariants: ``name`` is unique; ``token_hash`` is the SHA-256 of the agent's
current token (re-registering replaces it, so the old token stops working);
the token itself is never stored.  ``approved`` is false for a machine that
registered without the registration token: its agent may not claim work
until an admin approves it.

``fingerprint`` and ``fingerprint_hash`` are those of the current ``epoch``: a
registration whose identity hash differs starts a new epoch
(:class:`~xaclab_server.models.machine_epoch.MachineEpoch`), and results keep
the epoch they were stored in.
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
    epoch: Mapped[int] = mapped_column(default=1, server_default="1")
