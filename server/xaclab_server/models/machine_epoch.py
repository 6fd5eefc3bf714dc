"""A machine epoch: one stretch of a machine's history under one identity fingerprint.

Invariants: epochs of a machine are numbered 1, 2, 3 ... in the order they
started; a new one starts only when a registration's identity hash
(:func:`xaclab_contracts.fingerprint.fingerprint_hash`) differs from the
current epoch's.  ``fingerprint`` is the one registered when it started, so
the fields that changed can always be named.  The machine's ``epoch`` is its
newest; each result keeps the epoch it was stored in.
"""

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from xaclab_server.models.base import Base, utcnow


class MachineEpoch(Base):
    __tablename__ = "machine_epochs"
    __table_args__ = (UniqueConstraint("machine_id", "epoch"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    machine_id: Mapped[int] = mapped_column(ForeignKey("machines.id"), index=True)
    epoch: Mapped[int]
    fingerprint: Mapped[dict[str, Any]]
    fingerprint_hash: Mapped[str] = mapped_column(Text)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
