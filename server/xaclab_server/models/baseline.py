"""A baseline: the run of a suite on a machine that the lab compares later runs against.

Invariants: at most one per machine and suite (``uq_baselines_machine_id``
over machine and suite); the run is of that suite on that machine.  An
operator sets it, and setting another replaces it.  Deleting the run
deletes its baseline.  The "against the baseline" comparison of the run
and compare pages uses it (docs/server.md, "Comparisons").
"""

from datetime import datetime

from sqlalchemy import ForeignKey, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from xaclab_server.models.base import Base, utcnow


class Baseline(Base):
    __tablename__ = "baselines"
    __table_args__ = (UniqueConstraint("machine_id", "suite"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    machine_id: Mapped[int] = mapped_column(ForeignKey("machines.id"))
    suite: Mapped[str] = mapped_column(Text)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    set_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    set_at: Mapped[datetime] = mapped_column(default=utcnow)
