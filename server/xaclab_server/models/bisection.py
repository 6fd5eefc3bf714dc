"""A bisection: runs at libxac revisions between the two sides of a change point.

Invariants: ``candidates`` are the full hashes after ``good_revision`` up to
and including ``bad_revision`` (the revisions on either side of the change),
oldest first; ``steps`` records each revision tried, in order: its runs,
their values, the side it was classed on (``before``, ``after`` or ``skip``
when it would not build or run) and how sure that is.  ``state``:
``running`` (it waits for its newest run), ``done``
(``culprit`` is the first revision on the far side of the change, with
``confidence``), ``failed`` (``message`` says why) or ``cancelled``.
``started_by_id`` is NULL for a bisection the server started by itself.
The runs it queued are listed in ``bisection_runs``; they are not points the
detector reads.
"""

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from xaclab_server.models.base import Base, utcnow


class Bisection(Base):
    __tablename__ = "bisections"

    id: Mapped[int] = mapped_column(primary_key=True)
    change_point_id: Mapped[int] = mapped_column(ForeignKey("change_points.id"), index=True)
    state: Mapped[str] = mapped_column(Text, default="running")
    good_revision: Mapped[str] = mapped_column(Text)
    bad_revision: Mapped[str] = mapped_column(Text)
    candidates: Mapped[list[str]] = mapped_column(JSON().with_variant(JSONB(), "postgresql"))
    steps: Mapped[list[dict[str, Any]]] = mapped_column(JSON().with_variant(JSONB(), "postgresql"))
    culprit: Mapped[str | None] = mapped_column(Text)
    confidence: Mapped[float | None]
    message: Mapped[str] = mapped_column(Text, default="")
    started_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]
