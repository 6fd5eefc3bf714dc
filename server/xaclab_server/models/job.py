"""A job: the unit an agent claims; today one per run.

States: ``queued → running → succeeded | failed | cancelled``. Only the
machine named by ``machine_id`` may claim it, and a claim takes a queued job
exactly once even with several server processes on one PostgreSQL
(``FOR UPDATE SKIP LOCKED``).

``attempt`` counts claims.  A running job whose ``heartbeat_at`` is older than
the lease goes back to ``queued`` while ``attempt`` is below the limit, and
is failed after that.  ``cancel_requested`` is set by a user while the job
runs; the agent reads it in the heartbeat reply and ends the job as
``cancelled``.
"""

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import ForeignKey, Index, Text, false
from sqlalchemy.orm import Mapped, mapped_column, relationship

from xaclab_server.models.base import Base, utcnow

if TYPE_CHECKING:
    from xaclab_server.models.run import Run

JOB_STATES = ("queued", "running", "succeeded", "failed", "cancelled")
TERMINAL_STATES = ("succeeded", "failed", "cancelled")


class Job(Base):
    __tablename__ = "jobs"
    __table_args__ = (Index("ix_jobs_machine_id_status", "machine_id", "status"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id"), index=True)
    machine_id: Mapped[int] = mapped_column(ForeignKey("machines.id"))
    suite: Mapped[str] = mapped_column(Text)
    profile: Mapped[str] = mapped_column(Text)
    params: Mapped[dict[str, Any]]
    status: Mapped[str] = mapped_column(Text, default="queued")
    progress: Mapped[float] = mapped_column(default=0.0)
    message: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    claimed_at: Mapped[datetime | None]
    heartbeat_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    attempt: Mapped[int] = mapped_column(default=0, server_default="0")
    cancel_requested: Mapped[bool] = mapped_column(default=False, server_default=false())

    run: Mapped["Run"] = relationship(back_populates="jobs")
