"""A recurring run matrix: ``cron`` (five fields, UTC) says when, ``spec`` says what.

Invariants: ``next_run_at`` is the next time ``cron`` matches after the last
firing; the scheduler claims due rows with ``FOR UPDATE SKIP LOCKED`` and
moves ``next_run_at`` forward in the same transaction as it queues the
matrix, so with any number of server processes a firing happens once.
"""

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Text, true
from sqlalchemy.orm import Mapped, mapped_column

from xaclab_server.models.base import Base, utcnow


class Schedule(Base):
    __tablename__ = "schedules"
    __table_args__ = (Index("ix_schedules_enabled_next_run_at", "enabled", "next_run_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(Text)
    cron: Mapped[str] = mapped_column(Text)
    spec: Mapped[dict[str, Any]]
    enabled: Mapped[bool] = mapped_column(default=True, server_default=true())
    next_run_at: Mapped[datetime]
    last_run_at: Mapped[datetime | None]
    created_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), index=True
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
