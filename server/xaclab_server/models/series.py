"""A series: one measurement of one machine epoch over time (docs/change-points.md).

Identity: machine × epoch × suite × benchmark × metric (with its unit and
direction) × system (``sut``) × workload parameters.  ``params`` are the
job's parameters merged with the result's, less those whose role is
``observed`` and less ``libxac_revision`` and ``timeout``: the revision is
what a series is ordered by, not part of what it measures.  ``key`` is a
stable 20-hex-digit digest of that identity (:func:`xaclab_server.services.
series.series_key`); URLs name a series by it.

A series' points are its results (``results.series_id``), one per run (the
median of the run's results' medians when a run has several); runs queued by
a bisection belong to the series but are not among the points the detector
reads.  ``pending`` is set by each upload that adds a point and cleared by
the detector when it takes the series (``claimed_until`` keeps two server
processes from detecting one series at once).
"""

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Text, false
from sqlalchemy.orm import Mapped, mapped_column

from xaclab_server.models.base import Base, utcnow


class Series(Base):
    __tablename__ = "series"
    __table_args__ = (Index("ix_series_pending", "pending"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(Text, unique=True)
    machine_id: Mapped[int] = mapped_column(ForeignKey("machines.id"), index=True)
    epoch: Mapped[int]
    suite: Mapped[str] = mapped_column(Text)
    benchmark: Mapped[str] = mapped_column(Text)
    metric: Mapped[str] = mapped_column(Text)
    unit: Mapped[str] = mapped_column(Text)
    better: Mapped[str] = mapped_column(Text)
    sut: Mapped[str] = mapped_column(Text)
    params: Mapped[dict[str, Any]]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_point_at: Mapped[datetime] = mapped_column(default=utcnow)
    pending: Mapped[bool] = mapped_column(default=False, server_default=false())
    claimed_until: Mapped[datetime | None]
    detected_at: Mapped[datetime | None]
    # The run-to-run noise (relative robust sd between change points) and the number of
    # points it came from, as the last detection measured them; None: not judged (fewer
    # than services.sensitivity.MIN_POINTS points, or a median of 0).
    noise: Mapped[float | None]
    noise_points: Mapped[int | None]
