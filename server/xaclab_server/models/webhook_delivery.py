"""One webhook message and its delivery (the outbox the deliverer drains).

Invariants: a row is written in the same transaction as the alert or
bisection it tells about, so no event is lost and none is sent twice by two
server processes (the deliverer claims a row with ``next_attempt_at`` before
it posts).  ``status``: ``pending`` (to be tried at ``next_attempt_at``),
``delivered`` (a 2xx came back) or ``failed`` (out of attempts, or refused
for good); ``attempts`` counts posts, ``last_error`` says what went wrong
last.  ``url`` is the webhook URL when the event happened.
"""

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Text
from sqlalchemy.orm import Mapped, mapped_column

from xaclab_server.models.base import Base, utcnow


class WebhookDelivery(Base):
    __tablename__ = "webhook_deliveries"
    __table_args__ = (Index("ix_webhook_deliveries_status_next", "status", "next_attempt_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    event: Mapped[str] = mapped_column(Text)
    change_point_id: Mapped[int | None] = mapped_column(
        ForeignKey("change_points.id", ondelete="SET NULL"), index=True
    )
    url: Mapped[str] = mapped_column(Text)
    payload: Mapped[dict[str, Any]]
    status: Mapped[str] = mapped_column(Text, default="pending")
    attempts: Mapped[int] = mapped_column(default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_error: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    delivered_at: Mapped[datetime | None]
