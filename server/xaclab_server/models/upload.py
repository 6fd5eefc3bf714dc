"""An upload: one batch of results sent by an agent.

Invariant: ``upload_id`` (the agent's UUID) is unique, which makes a resent
upload harmless: the second one is answered as a duplicate and stores nothing.
"""

from datetime import datetime

from sqlalchemy import ForeignKey, Text
from sqlalchemy.orm import Mapped, mapped_column

from xaclab_server.models.base import Base, utcnow


class Upload(Base):
    __tablename__ = "uploads"

    id: Mapped[int] = mapped_column(primary_key=True)
    upload_id: Mapped[str] = mapped_column(Text, unique=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id"), index=True)
    received_at: Mapped[datetime] = mapped_column(default=utcnow)
