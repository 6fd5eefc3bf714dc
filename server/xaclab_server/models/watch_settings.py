"""The lab's alerting settings, one row (``id`` = 1), set by an admin.

``webhook_url`` (NULL: no webhook) receives a JSON POST for every new alert
and finished bisection (:mod:`xaclab_server.services.webhooks`); it is an
http(s) URL that does not point at this server.  ``auto_bisect`` starts a
bisection by itself for each new regression that falls between two libxac
revisions.
"""

from datetime import datetime

from sqlalchemy import ForeignKey, Text, false
from sqlalchemy.orm import Mapped, mapped_column

from xaclab_server.models.base import Base, utcnow


class WatchSettings(Base):
    __tablename__ = "watch_settings"

    id: Mapped[int] = mapped_column(primary_key=True)
    webhook_url: Mapped[str | None] = mapped_column(Text)
    auto_bisect: Mapped[bool] = mapped_column(default=False, server_default=false())
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
