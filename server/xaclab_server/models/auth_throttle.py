"""Failures counted against one key (an account, a client address), shared by every process.

Invariants: (``scope``, ``key``) is unique; ``failures`` counts the attempts
of the key since ``last_failure_at`` minus ``throttle_forget_seconds``
(attempts are counted before their secret is checked and a success takes
its count back, see ``services/throttle.py``); while ``blocked_until`` lies
in the future every attempt under the key is answered 429 without its
secret being checked.  ``refusal_recorded`` says the present block's first
refusal is in the audit log, so a flood of refused attempts writes one
audit entry per block, not one per attempt.  Rows whose failures are
forgotten and whose block is over are swept.
"""

from datetime import datetime

from sqlalchemy import Text, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column

from xaclab_server.models.base import Base


class AuthThrottle(Base):
    __tablename__ = "auth_throttles"
    __table_args__ = (UniqueConstraint("scope", "key", name="uq_auth_throttles_scope_key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    # login-account, login-address or register-address
    scope: Mapped[str] = mapped_column(Text)
    key: Mapped[str] = mapped_column(Text)
    failures: Mapped[int] = mapped_column(default=0)
    last_failure_at: Mapped[datetime]
    blocked_until: Mapped[datetime | None]
    refusal_recorded: Mapped[bool] = mapped_column(default=False, server_default=false())
