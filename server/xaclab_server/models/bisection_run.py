"""A run queued by a bisection (:mod:`.bisection`).

Its results belong to their series like any other, but the detector leaves
them out: they ran older revisions out of time order, to answer the
bisection's question.
"""

from sqlalchemy import ForeignKey
from sqlalchemy.orm import Mapped, mapped_column

from xaclab_server.models.base import Base


class BisectionRun(Base):
    __tablename__ = "bisection_runs"

    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id"), primary_key=True)
    bisection_id: Mapped[int] = mapped_column(ForeignKey("bisections.id"), index=True)
