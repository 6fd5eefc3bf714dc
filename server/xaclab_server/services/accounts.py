"""Users, login sessions and API tokens.

Who is asking is decided here and only here: :func:`user_for_session` for a
browser's cookie, :func:`user_for_api_token` for a script's bearer token.
Both refuse disabled users, expired sessions and revoked tokens.
"""

import re
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, func, select
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
from xaclab_server.models.base import utcnow
from xaclab_server.models.user import ROLES

USERNAME = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
TOKEN_NAME_MAX = 100


class AccountError(ValueError):
    """A refused account change; the message is a sentence for the user."""


@dataclass(frozen=True, slots=True)
class NewSession:
    token: str  # for the cookie; only its hash is stored
    csrf_token: str
    user: User


def check_username(username: str) -> None:
    if not USERNAME.match(username):
        raise AccountError("A username is 1 to 64 characters of letters, digits, '.', '_' or '-'.")


def check_role(role: str) -> None:
    if role not in ROLES:
        raise AccountError(f"A role is one of {', '.join(ROLES)}, not {role!r}.")


def create_user(*, session: Session, username: str, password: str, role: str) -> User:
    check_username(username)
    check_role(role)
    problem = password_problem(password)
    if problem:
        raise AccountError(problem)
    user = User(username=username, password_hash=hash_password(password), role=role)
    session.add(user)
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise AccountError(f"A user called {username!r} already exists.") from None
    return user


def count_users(*, session: Session) -> int:
    return session.scalar(select(func.count()).select_from(User)) or 0


def update_user(
    *,
    session: Session,
    user: User,
    role: str | None = None,
    disabled: bool | None = None,
    password: str | None = None,
) -> User:
    if role is not None:
        check_role(role)
        user.role = role
    if disabled is not None:
        user.disabled = disabled
    if password is not None:
        problem = password_problem(password)
        if problem:
            raise AccountError(problem)
        user.password_hash = hash_password(password)
    if disabled or password is not None:
        # A disabled user or a changed password ends every open login.
        session.execute(delete(LoginSession).where(LoginSession.user_id == user.id))
    session.flush()
    admins = session.scalar(
        select(func.count()).select_from(User).where(User.role == "admin", User.disabled.is_(False))
    )
    if not admins:
        session.rollback()
        raise AccountError("The last enabled admin cannot be demoted or disabled.")
    session.commit()
    return user


def authenticate(*, session: Session, username: str, password: str) -> User | None:
    user = session.scalar(select(User).where(User.username == username))
    ok = verify_password(user.password_hash if user else None, password)
    if user is None or not ok or user.disabled:
        return None
    return user


def start_session(*, session: Session, user: User, hours: float) -> NewSession:
    token = new_token()
    csrf = new_token()
    now = utcnow()
    session.add(
        LoginSession(
            user_id=user.id,
            token_hash=hash_token(token),
            csrf_token=csrf,
            created_at=now,
            expires_at=now + timedelta(hours=hours),
        )
    )
    user.last_login_at = now
    # Expired sessions of anyone are swept at each login; nothing else needs to.
    session.execute(delete(LoginSession).where(LoginSession.expires_at < now))
    session.commit()
    return NewSession(token=token, csrf_token=csrf, user=user)


def user_for_session(*, session: Session, token: str) -> tuple[User, LoginSession] | None:
    row = session.execute(
        select(User, LoginSession)
        .join(LoginSession, LoginSession.user_id == User.id)
        .where(LoginSession.token_hash == hash_token(token))
    ).first()
    if row is None:
        return None
    user, login = row
    if user.disabled or login.expires_at < utcnow():
        return None
    return user, login


def end_session(*, session: Session, token: str) -> None:
    session.execute(delete(LoginSession).where(LoginSession.token_hash == hash_token(token)))
    session.commit()


def create_api_token(*, session: Session, user: User, name: str) -> tuple[ApiToken, str]:
    name = name.strip()
    if not name or len(name) > TOKEN_NAME_MAX:
        raise AccountError(f"A token's name is 1 to {TOKEN_NAME_MAX} characters.")
    token = new_token(API_TOKEN_PREFIX)
    row = ApiToken(user_id=user.id, name=name, prefix=token[:10], token_hash=hash_token(token))
    session.add(row)
    session.commit()
    return row, token


def user_for_api_token(*, session: Session, token: str) -> User | None:
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
    now = utcnow()
    # At most one write a minute per token, so a busy script does not write on every call.
    if api_token.last_used_at is None or now - api_token.last_used_at > timedelta(minutes=1):
        api_token.last_used_at = now
        session.commit()
    return user


def list_api_tokens(*, session: Session, user: User) -> list[ApiToken]:
    return list(
        session.scalars(select(ApiToken).where(ApiToken.user_id == user.id).order_by(ApiToken.id))
    )


def revoke_api_token(*, session: Session, user: User, token_id: int) -> ApiToken:
    row = session.get(ApiToken, token_id)
    if row is None or (row.user_id != user.id and user.role != "admin"):
        raise AccountError(f"Token {token_id} does not exist.")
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        session.commit()
    return row
