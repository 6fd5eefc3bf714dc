"""A run: one request to run a suite with a profile and parameters on a machine.

Invariant: ``status`` is derived from the run's jobs
(:func:`xaclab_server.services.jobs.refresh_run_status`) and never set alone.
A run queued from a matrix has one job per factor combination
(``matrix_id``); ``created_by_id`` is the user who asked for it (NULL for
runs queued before accounts existed, or by a schedule whose owner is gone).
"""

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import ForeignKey, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from xaclab_server.models.base import Base, utcnow

if TYPE_CHECKING:
    from xaclab_server.models.job import Job


class Run(Base):
    __tablename__ = "runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    machine_id: Mapped[int] = mapped_column(ForeignKey("machines.id"), index=True)
    suite: Mapped[str] = mapped_column(Text)
    profile: Mapped[str] = mapped_column(Text)
    params: Mapped[dict[str, Any]]
    status: Mapped[str] = mapped_column(Text, default="queued")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]
    matrix_id: Mapped[int | None] = mapped_column(
        ForeignKey("matrices.id", ondelete="SET NULL"), index=True
    )
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))

    jobs: Mapped[list["Job"]] = relationship(back_populates="run", order_by="Job.id")
