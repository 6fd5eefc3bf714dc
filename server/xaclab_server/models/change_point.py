"""A change point of a series, and the alert it raises (docs/change-points.md).

Invariants: ``before_run_id`` is the run of the last point before the change
and ``after_run_id`` the run of the first point after it, in the series' time
order; ``before_revision`` and ``after_revision`` are the libxac revisions
those points ran (the results' ``git_revision``).  ``change`` is mean after /
mean before - 1 over the points between the neighbouring change points, with
``change_low``..``change_high`` its 95 % bootstrap interval; ``noise`` is the
robust standard deviation of those points relative to the mean before.
``direction`` is ``regression`` or ``improvement`` by the metric's ``better``.

The detector rewrites the statistics each time it runs; a change point it no
longer finds keeps its row with ``withdrawn_at`` set (and comes back if found
again).  ``state`` is the people's: ``open``, ``acknowledged`` (someone looks
into it) or ``dismissed`` (expected, with ``note``).
"""

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Text
from sqlalchemy.orm import Mapped, mapped_column

from xaclab_server.models.base import Base, utcnow

ALERT_STATES = ("open", "acknowledged", "dismissed")


class ChangePoint(Base):
    __tablename__ = "change_points"
    __table_args__ = (Index("ix_change_points_state_id", "state", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    series_id: Mapped[int] = mapped_column(ForeignKey("series.id"), index=True)
    before_run_id: Mapped[int] = mapped_column(ForeignKey("runs.id"))
    after_run_id: Mapped[int] = mapped_column(ForeignKey("runs.id"), index=True)
    before_at: Mapped[datetime]
    after_at: Mapped[datetime]
    before_revision: Mapped[str] = mapped_column(Text)
    after_revision: Mapped[str] = mapped_column(Text)
    points_before: Mapped[int]
    points_after: Mapped[int]
    mean_before: Mapped[float]
    mean_after: Mapped[float]
    change: Mapped[float]
    change_low: Mapped[float | None]
    change_high: Mapped[float | None]
    p_value: Mapped[float]
    noise: Mapped[float]
    direction: Mapped[str] = mapped_column(Text)
    # Where it was found: "series" (the series itself) or "relative" (against its runs'
    # other configurations, services/reference_view.py); its numbers are that view's.
    view: Mapped[str] = mapped_column(Text, default="series", server_default="series")
    detected_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    withdrawn_at: Mapped[datetime | None]
    state: Mapped[str] = mapped_column(Text, default="open", server_default="open")
    state_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    state_at: Mapped[datetime | None]
    note: Mapped[str] = mapped_column(Text, default="", server_default="")
