"""A browser's login: the session cookie names it, the CSRF token guards its forms.

Invariants: the cookie holds a random token whose SHA-256 is ``token_hash``;
``csrf_token`` is the synchronizer token every form and every cookie-borne
write must echo; a session past ``expires_at`` (its absolute end), idle
since ``last_seen_at`` for longer than the idle limit, or of a disabled user
is refused and deleted.  ``last_seen_at`` is written at most once a minute,
so it lags the last request by up to a minute.  Sessions live in the
database so every server process knows them and logging out ends them
everywhere.
"""

from datetime import datetime

from sqlalchemy import ForeignKey, Text
from sqlalchemy.orm import Mapped, mapped_column

from xaclab_server.models.base import Base, utcnow


class LoginSession(Base):
    __tablename__ = "login_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(Text, unique=True)
    csrf_token: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    last_seen_at: Mapped[datetime] = mapped_column(default=utcnow)
