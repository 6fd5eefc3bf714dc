"""One entry of the audit log: who did what, from where, when, and how it ended.

Invariants: entries are only ever added, never changed; ``actor`` is the
name of whoever acted as it was then (a username, ``agent <name>``, or the
command line), kept even when the user is later deleted (``actor_id`` is
then NULL); ``address`` is the client's address as the server saw it (the
TCP peer), ``local`` for the command line; ``outcome`` is ``ok``,
``failed`` or ``throttled``; ``detail`` is a small JSON object of facts
(the role given, what changed, how long a block lasts) and never holds a
password, a token or any other secret.
"""

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Text
from sqlalchemy.orm import Mapped, mapped_column

from xaclab_server.models.base import Base


class AuditEvent(Base):
    __tablename__ = "audit_events"
    __table_args__ = (Index("ix_audit_events_action_id", "action", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime]
    action: Mapped[str] = mapped_column(Text)
    outcome: Mapped[str] = mapped_column(Text)
    actor_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), index=True
    )
    actor: Mapped[str] = mapped_column(Text)
    address: Mapped[str | None] = mapped_column(Text)
    target: Mapped[str | None] = mapped_column(Text)
    detail: Mapped[dict[str, Any]]
