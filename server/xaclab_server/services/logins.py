"""A login attempt, as the API and the login form both make it: throttled, checked, audited.

Every wrong attempt gets the same refusal, whether the account exists, is
disabled or was given the wrong password, and costs the same work: the
attempt is counted (``services/throttle.py``), a password hash is checked
(a dummy one for an unknown name), an audit entry is written.  An attempt
under a blocked account or address is refused with :class:`Throttled`
before any password is checked.
"""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from xaclab_server.models import User
from xaclab_server.services import accounts, audit
from xaclab_server.services.accounts import NewSession, SessionLimits
from xaclab_server.services.audit import UNKNOWN_USER, Actor
from xaclab_server.services.throttle import LOGIN_ACCOUNT, Throttle, Throttled

__all__ = ["LoginRefused", "Throttled", "log_in", "throttled_sentence", "WRONG_LOGIN"]

WRONG_LOGIN = "The username or password is wrong."


class LoginRefused(Exception):
    """The username or password is wrong (or the account disabled): one refusal for all."""


@dataclass(frozen=True, slots=True)
class Attempt:
    username: str
    password: str
    address: str


def throttled_sentence(refusal: Throttled) -> str:
    return (
        "Too many failed logins for this account or from this address; "
        f"try again in {refusal.retry_after} seconds."
    )


def log_in(
    *, session: Session, throttle: Throttle, attempt: Attempt, limits: SessionLimits
) -> NewSession:
    """A new session for the attempt's user, or :class:`LoginRefused` / :class:`Throttled`."""
    keys = throttle.login_keys(username=attempt.username, address=attempt.address)
    try:
        counted = throttle.count(session, keys)
    except Throttled as refusal:
        if refusal.first_refusal:
            _record(
                session,
                at=throttle.clock(),
                user=_user_named(session, attempt.username),
                attempt=attempt,
                outcome="throttled",
                detail={"retry_after_seconds": refusal.retry_after, "blocked": refusal.what},
            )
        raise
    user, ok = accounts.find_login(
        session=session, username=attempt.username, password=attempt.password
    )
    now = throttle.clock()
    if not ok:
        reason = (
            "unknown user" if user is None else ("disabled" if user.disabled else "wrong password")
        )
        detail: dict[str, str | int] = {"reason": reason, **counted.block_facts()}
        _record(session, at=now, user=user, attempt=attempt, outcome="failed", detail=detail)
        raise LoginRefused(WRONG_LOGIN)
    assert user is not None
    throttle.succeeded(session, counted, clear=[LOGIN_ACCOUNT])
    _record(session, at=now, user=user, attempt=attempt, outcome="ok", detail={})
    return accounts.start_session(session=session, user=user, limits=limits, now=now)


def _user_named(session: Session, username: str) -> User | None:
    return session.scalar(select(User).where(User.username == username))


def _record(
    session: Session,
    *,
    at: datetime,
    user: User | None,
    attempt: Attempt,
    outcome: str,
    detail: dict[str, str | int],
) -> None:
    actor = (
        Actor.of_user(user, attempt.address)
        if user is not None
        else Actor(name=UNKNOWN_USER, address=attempt.address)
    )
    audit.record(
        session,
        at=at,
        actor=actor,
        action="login",
        outcome=outcome,
        target=user.username if user is not None else None,
        detail=dict(detail),
    )
    session.commit()
