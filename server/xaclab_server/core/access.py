"""Who may do what: the one access rule of the user API and the pages.

A request comes from a :class:`Principal`: a user behind an API token, a
user behind a login session's cookie, or nobody.  Reads need a user unless
``anonymous_read`` is true.  Writes need a role; a write that the session
cookie authenticates must also echo the session's CSRF token, since a
browser sends the cookie with a forged cross-site request but never the
token.

The checks raise an :class:`AccessRefused`.  The API answers it with 401 or
403 and a sentence (``api/deps.py``); the pages with a login redirect or a
refused page (``ui/guards.py``)::

    AccessRefused
    ├── LoginNeeded    nobody is logged in (a form also needs a login session)
    ├── RoleTooLow     the user's role is below the one needed
    └── CsrfMismatch   a cookie-authenticated write without the session's CSRF token
"""

from dataclasses import dataclass
from typing import Literal

from xaclab_server.core.security import same_secret
from xaclab_server.models import User
from xaclab_server.models.user import role_at_least


@dataclass(frozen=True, slots=True)
class Principal:
    """Who sent a user-API or page request."""

    user: User | None
    via: Literal["token", "session", "anonymous"]
    csrf_token: str | None = None


class AccessRefused(Exception):
    """The principal may not do what the request asks."""


class LoginNeeded(AccessRefused):
    pass


class RoleTooLow(AccessRefused):
    def __init__(self, user: User, role: str) -> None:
        super().__init__(f"This needs the {role} role; {user.username}'s role is {user.role}.")
        self.user = user
        self.role = role


class CsrfMismatch(AccessRefused):
    pass


def check_read(principal: Principal, *, anonymous_read: bool) -> None:
    if principal.user is None and not anonymous_read:
        raise LoginNeeded()


def require_role(principal: Principal, role: str) -> User:
    """The principal's user, who must have ``role`` or a higher one."""
    if principal.user is None:
        raise LoginNeeded()
    return check_role(principal.user, role)


def check_role(user: User, role: str) -> User:
    if not role_at_least(user.role, role):
        raise RoleTooLow(user, role)
    return user


def check_write(
    principal: Principal, *, role: str, csrf_token: str | None, session_only: bool = False
) -> User:
    """The user behind a write, who must have ``role`` and, with the session cookie, echo
    the session's CSRF token.  ``session_only``: an API token does not do (a form post)."""
    if session_only and principal.via != "session":
        raise LoginNeeded()
    user = require_role(principal, role)
    if principal.via == "session" and not same_secret(csrf_token, principal.csrf_token):
        raise CsrfMismatch()
    return user
