"""A run matrix: suites × machines × factor values, as one user asked for it.

Invariant: ``spec`` is the validated request (docs/server.md, "Run
matrices"); the server expanded it into one run per (machine, suite,
profile) and one job per combination of the other factors, each job
carrying its factor values in its params.  ``schedule_id`` names the
schedule that queued it, if any.
"""

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey
from sqlalchemy.orm import Mapped, mapped_column

from xaclab_server.models.base import Base, utcnow


class Matrix(Base):
    __tablename__ = "matrices"

    id: Mapped[int] = mapped_column(primary_key=True)
    spec: Mapped[dict[str, Any]]
    created_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), index=True
    )
    schedule_id: Mapped[int | None] = mapped_column(
        ForeignKey("schedules.id", ondelete="SET NULL"), index=True
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
