"""A chunk of a job's program output, as the agent streamed it.

Invariant: ``(job_id, seq)`` is unique, which makes a resent chunk harmless:
the first one with a sequence number is kept, later ones are ignored.
"""

from datetime import datetime

from sqlalchemy import ForeignKey, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from xaclab_server.models.base import Base, utcnow

LOG_STREAMS = ("stdout", "stderr", "agent")


class JobLog(Base):
    __tablename__ = "job_logs"
    __table_args__ = (UniqueConstraint("job_id", "seq", name="uq_job_logs_job_id_seq"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id"))
    seq: Mapped[int]
    stream: Mapped[str] = mapped_column(Text)
    text: Mapped[str] = mapped_column(Text)
    received_at: Mapped[datetime] = mapped_column(default=utcnow)
