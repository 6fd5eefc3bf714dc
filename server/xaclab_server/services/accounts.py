"""Users, login sessions and API tokens.

Who is asking is decided here and only here: :func:`user_for_session` for a
browser's cookie, :func:`user_for_api_token` for a script's bearer token.
Both refuse disabled users, expired sessions and revoked tokens.  A login
session ends ``hours`` after it began or ``idle`` after its last request,
whichever comes first.  A changed password or role, or a disabled user,
ends every session and revokes every API token of that user.  Every change
is written to the audit log in the same transaction (``services/audit.py``).
"""

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, Result, delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from xaclab_server.core.security import (
    API_TOKEN_PREFIX,
    hash_password,
    hash_token,
    new_token,
    password_problem,
    verify_password,
)
from xaclab_server.models import ApiToken, LoginSession, User
from xaclab_server.models.user import ROLES
from xaclab_server.services import audit
from xaclab_server.services.audit import Actor

USERNAME = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
TOKEN_NAME_MAX = 100
# A session's last_seen_at is written at most this often (one write a minute, not one a request).
SEEN_EVERY = timedelta(minutes=1)


class AccountError(ValueError):
    """A refused account change; the message is a sentence for the user."""


@dataclass(frozen=True, slots=True)
class NewSession:
    token: str  # for the cookie; only its hash is stored
    csrf_token: str
    user: User


@dataclass(frozen=True, slots=True)
class SessionLimits:
    hours: float
    idle_minutes: float


def check_username(username: str) -> None:
    if not USERNAME.match(username):
        raise AccountError("A username is 1 to 64 characters of letters, digits, '.', '_' or '-'.")


def check_role(role: str) -> None:
    if role not in ROLES:
        raise AccountError(f"A role is one of {', '.join(ROLES)}, not {role!r}.")


def create_user(
    *, session: Session, username: str, password: str, role: str, actor: Actor, now: datetime
) -> User:
    check_username(username)
    check_role(role)
    problem = password_problem(password)
    if problem:
        raise AccountError(problem)
    user = User(username=username, password_hash=hash_password(password), role=role)
    session.add(user)
    try:
        session.flush()
    except IntegrityError:
        session.rollback()
        raise AccountError(f"A user called {username!r} already exists.") from None
    audit.record(
        session, at=now, actor=actor, action="user.create", target=username, detail={"role": role}
    )
    session.commit()
    return user


def count_users(*, session: Session) -> int:
    return session.scalar(select(func.count()).select_from(User)) or 0


def update_user(
    *,
    session: Session,
    user: User,
    actor: Actor,
    now: datetime,
    role: str | None = None,
    disabled: bool | None = None,
    password: str | None = None,
) -> User:
    """Change ``user``; a new password or role, or disabling, also ends the user's logins."""
    if role is not None:
        check_role(role)
    problem = password_problem(password) if password is not None else None
    if problem:
        raise AccountError(problem)
    changed: dict[str, str | bool | int] = {}
    if role is not None and role != user.role:
        user.role = changed["role"] = role
    if disabled is not None and disabled != user.disabled:
        user.disabled = changed["disabled"] = disabled
    if password is not None:
        user.password_hash = hash_password(password)
        changed["password"] = "changed"
    if user.disabled or "role" in changed or "password" in changed:
        changed.update(end_logins(session=session, user=user, now=now))
    session.flush()
    admins = session.scalar(
        select(func.count()).select_from(User).where(User.role == "admin", User.disabled.is_(False))
    )
    if not admins:
        session.rollback()
        raise AccountError("The last enabled admin cannot be demoted or disabled.")
    if changed:
        audit.record(
            session, at=now, actor=actor, action="user.update", target=user.username, detail=changed
        )
    session.commit()
    return user


def end_logins(*, session: Session, user: User, now: datetime) -> dict[str, int]:
    """End every login session and revoke every API token of ``user`` (not committed)."""
    sessions = session.execute(delete(LoginSession).where(LoginSession.user_id == user.id))
    tokens = session.execute(
        update(ApiToken)
        .where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    counts = {"sessions_ended": _rows(sessions), "tokens_revoked": _rows(tokens)}
    return {what: count for what, count in counts.items() if count}


def _rows(result: Result[Any]) -> int:
    """How many rows an UPDATE or DELETE touched."""
    return int(cast(CursorResult[Any], result).rowcount)


def find_login(*, session: Session, username: str, password: str) -> tuple[User | None, bool]:
    """The user called ``username`` (or None) and whether ``password`` lets them in.

    The password is checked against a hash in every case, a dummy one for an
    unknown name, so a refusal takes as long whether the account exists or not.
    """
    user = session.scalar(select(User).where(User.username == username))
    ok = verify_password(user.password_hash if user else None, password)
    return user, ok and user is not None and not user.disabled


def authenticate(*, session: Session, username: str, password: str) -> User | None:
    user, ok = find_login(session=session, username=username, password=password)
    return user if ok else None


def start_session(
    *, session: Session, user: User, limits: SessionLimits, now: datetime
) -> NewSession:
    token = new_token()
    csrf = new_token()
    session.add(
        LoginSession(
            user_id=user.id,
            token_hash=hash_token(token),
            csrf_token=csrf,
            created_at=now,
            expires_at=now + timedelta(hours=limits.hours),
            last_seen_at=now,
        )
    )
    user.last_login_at = now
    # Sessions of anyone past either limit are swept at each login; nothing else needs to.
    session.execute(
        delete(LoginSession).where(
            (LoginSession.expires_at < now)
            | (LoginSession.last_seen_at < now - timedelta(minutes=limits.idle_minutes))
        )
    )
    session.commit()
    return NewSession(token=token, csrf_token=csrf, user=user)


def user_for_session(
    *, session: Session, token: str, limits: SessionLimits, now: datetime
) -> tuple[User, LoginSession] | None:
    row = session.execute(
        select(User, LoginSession)
        .join(LoginSession, LoginSession.user_id == User.id)
        .where(LoginSession.token_hash == hash_token(token))
    ).first()
    if row is None:
        return None
    user, login = row
    idle_end = login.last_seen_at + timedelta(minutes=limits.idle_minutes)
    if user.disabled or login.expires_at <= now or idle_end <= now:
        session.delete(login)
        session.commit()
        return None
    if now - login.last_seen_at >= SEEN_EVERY:
        login.last_seen_at = now
        session.commit()
    return user, login


def end_session(*, session: Session, token: str, actor: Actor | None, now: datetime) -> None:
    """Log out: the session is deleted; ``actor`` (the user it was) goes to the audit log."""
    ended = session.execute(
        delete(LoginSession).where(LoginSession.token_hash == hash_token(token))
    )
    if _rows(ended) and actor is not None:
        audit.record(session, at=now, actor=actor, action="logout", target=actor.name)
    session.commit()


def create_api_token(
    *, session: Session, user: User, name: str, actor: Actor, now: datetime
) -> tuple[ApiToken, str]:
    name = name.strip()
    if not name or len(name) > TOKEN_NAME_MAX:
        raise AccountError(f"A token's name is 1 to {TOKEN_NAME_MAX} characters.")
    token = new_token(API_TOKEN_PREFIX)
    row = ApiToken(
        user_id=user.id, name=name, prefix=token[:10], token_hash=hash_token(token), created_at=now
    )
    session.add(row)
    session.flush()
    audit.record(
        session,
        at=now,
        actor=actor,
        action="token.create",
        target=user.username,
        detail={"token_id": row.id, "token_name": name},
    )
    session.commit()
    return row, token


def user_for_api_token(*, session: Session, token: str, now: datetime) -> User | None:
    row = session.execute(
        select(User, ApiToken)
        .join(ApiToken, ApiToken.user_id == User.id)
        .where(ApiToken.token_hash == hash_token(token), ApiToken.revoked_at.is_(None))
    ).first()
    if row is None:
        return None
    user: User = row[0]
    api_token: ApiToken = row[1]
    if user.disabled:
        return None
    # At most one write a minute per token, so a busy script does not write on every call.
    if api_token.last_used_at is None or now - api_token.last_used_at > SEEN_EVERY:
        api_token.last_used_at = now
        session.commit()
    return user


def list_api_tokens(*, session: Session, user: User) -> list[ApiToken]:
    return list(
        session.scalars(select(ApiToken).where(ApiToken.user_id == user.id).order_by(ApiToken.id))
    )


def revoke_api_token(
    *, session: Session, user: User, token_id: int, actor: Actor, now: datetime
) -> ApiToken:
    row = session.get(ApiToken, token_id)
    if row is None or (row.user_id != user.id and user.role != "admin"):
        raise AccountError(f"Token {token_id} does not exist.")
    if row.revoked_at is None:
        row.revoked_at = now
        owner = session.get(User, row.user_id)
        audit.record(
            session,
            at=now,
            actor=actor,
            action="token.revoke",
            target=owner.username if owner else None,
            detail={"token_id": row.id, "token_name": row.name},
        )
        session.commit()
    return row
