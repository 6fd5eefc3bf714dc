"""Dependencies shared by the routes, as ``Annotated`` aliases.

Who is asking: :data:`CurrentAgent` on the agent API (the agent token);
:data:`PrincipalDep` on the user API and the pages (an API token, a login
session cookie, or nobody).  :func:`user_api_guard` guards every user-API
router: reads need a user unless ``anonymous_read``; writes need an operator
and, when the session cookie is what authenticates them, the CSRF token in
``X-CSRF-Token``.  :data:`CurrentUser`, :data:`OperatorUser` and
:data:`AdminUser` give a route the user it needs or answer 401/403.  The
rule itself is :mod:`xaclab_server.core.access`, which the pages share.
"""

import re
from typing import Annotated

from fastapi import Depends, HTTPException, Request, status
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session, sessionmaker
from xaclab_contracts.roles import ParamRoles

from xaclab_server.core import access
from xaclab_server.core.access import AccessRefused, CsrfMismatch, LoginNeeded, Principal
from xaclab_server.core.clock import Clock
from xaclab_server.core.config import Settings
from xaclab_server.core.db import get_db
from xaclab_server.core.security import API_TOKEN_PREFIX, CSRF_HEADER, SESSION_COOKIE
from xaclab_server.models import Machine, User
from xaclab_server.services import accounts
from xaclab_server.services.accounts import SessionLimits
from xaclab_server.services.audit import Actor
from xaclab_server.services.libxac_git import LibxacGit
from xaclab_server.services.machines import authenticate_agent
from xaclab_server.services.notifier import JobNotifier
from xaclab_server.services.results import ResultValidator
from xaclab_server.services.suites import Suite
from xaclab_server.services.thesis_figures import ThesisFigures
from xaclab_server.services.throttle import Throttle
from xaclab_server.services.watcher import Watcher

SessionDep = Annotated[Session, Depends(get_db)]


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_sessionmaker(request: Request) -> sessionmaker[Session]:
    factory: sessionmaker[Session] = request.app.state.sessionmaker
    return factory


async def get_suites(request: Request) -> dict[str, Suite]:
    suites: dict[str, Suite] = request.app.state.suites
    return suites


async def get_param_roles(request: Request) -> ParamRoles:
    roles: ParamRoles = request.app.state.param_roles
    return roles


async def get_result_validator(request: Request) -> ResultValidator:
    validator: ResultValidator = request.app.state.result_validator
    return validator


async def get_notifier(request: Request) -> JobNotifier:
    notifier: JobNotifier = request.app.state.notifier
    return notifier


async def get_clock(request: Request) -> Clock:
    clock: Clock = request.app.state.clock
    return clock


async def get_throttle(request: Request) -> Throttle:
    throttle: Throttle = request.app.state.throttle
    return throttle


async def get_thesis_figures(request: Request) -> ThesisFigures:
    figures: ThesisFigures = request.app.state.thesis_figures
    return figures


async def get_watcher(request: Request) -> Watcher:
    watcher: Watcher = request.app.state.watcher
    return watcher


async def get_libxac_git(request: Request) -> LibxacGit | None:
    git: LibxacGit | None = request.app.state.libxac_git
    return git


SettingsDep = Annotated[Settings, Depends(get_settings)]
SessionFactoryDep = Annotated[sessionmaker[Session], Depends(get_sessionmaker)]
SuitesDep = Annotated[dict[str, Suite], Depends(get_suites)]
ParamRolesDep = Annotated[ParamRoles, Depends(get_param_roles)]
ResultValidatorDep = Annotated[ResultValidator, Depends(get_result_validator)]
NotifierDep = Annotated[JobNotifier, Depends(get_notifier)]
ThesisFiguresDep = Annotated[ThesisFigures, Depends(get_thesis_figures)]
ClockDep = Annotated[Clock, Depends(get_clock)]
ThrottleDep = Annotated[Throttle, Depends(get_throttle)]
WatcherDep = Annotated[Watcher, Depends(get_watcher)]
LibxacGitDep = Annotated[LibxacGit | None, Depends(get_libxac_git)]

# What the server's tokens look like: a prefix and 43 characters of URL-safe base64.
API_TOKEN_SHAPE = re.compile(re.escape(API_TOKEN_PREFIX) + r"[A-Za-z0-9_-]{43}")
AGENT_TOKEN_SHAPE = re.compile(r"xa_[A-Za-z0-9_-]{43}")
SESSION_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{43}")


def client_address(request: Request) -> str:
    """The client's address as the server sees it: the TCP peer (no proxy headers)."""
    return request.client.host if request.client else "unknown"


def session_limits(settings: Settings) -> SessionLimits:
    return SessionLimits(hours=settings.session_hours, idle_minutes=settings.session_idle_minutes)


_bearer = HTTPBearer(auto_error=False, description="The agent token from POST /register.")


async def get_current_agent(
    factory: SessionFactoryDep,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Machine:
    if credentials is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "This call needs an agent token: send 'Authorization: Bearer <agent_token>'.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    token = credentials.credentials
    if not AGENT_TOKEN_SHAPE.fullmatch(token):
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "The agent token is malformed: an agent token is 'xa_' and 43 letters, digits, "
            "'-' or '_', as POST /register gave it.",
            headers={"WWW-Authenticate": "Bearer"},
        )

    def look_up() -> Machine | None:
        with factory() as session:
            return authenticate_agent(
                session=session,
                token=token,
                # At most one write per quarter of the online window (30 s of 120 s).
                touch_seconds=settings.machine_online_seconds / 4,
            )

    # One worker-thread hop for the whole lookup: agents' long polls are most
    # of an idle server's requests (server/bench/idle_agents.py).
    machine = await run_in_threadpool(look_up)
    if machine is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "The agent token is not known (or was replaced by a newer registration); "
            "register the agent again.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    if not machine.approved:
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            f"Machine {machine.name!r} waits for an admin's approval; ask an admin to approve "
            "it on the machines page.",
        )
    return machine


CurrentAgent = Annotated[Machine, Depends(get_current_agent)]


def get_principal(
    request: Request, session: SessionDep, settings: SettingsDep, clock: ClockDep
) -> Principal:
    header = request.headers.get("authorization", "")
    scheme, _, credentials = header.partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        token = credentials.strip()
        if not API_TOKEN_SHAPE.fullmatch(token):
            raise HTTPException(
                status.HTTP_401_UNAUTHORIZED,
                f"The API token is malformed: an API token is '{API_TOKEN_PREFIX}' and 43 "
                "letters, digits, '-' or '_', as the tokens page shows it once.",
                headers={"WWW-Authenticate": "Bearer"},
            )
        user = accounts.user_for_api_token(session=session, token=token, now=clock())
        if user is None:
            raise HTTPException(
                status.HTTP_401_UNAUTHORIZED,
                "The API token is not known or was revoked; create one on the tokens page.",
                headers={"WWW-Authenticate": "Bearer"},
            )
        return Principal(user=user, via="token")
    cookie = request.cookies.get(SESSION_COOKIE)
    # A malformed cookie names no session: the request is anonymous, as with none.
    if cookie and SESSION_TOKEN_SHAPE.fullmatch(cookie):
        found = accounts.user_for_session(
            session=session, token=cookie, limits=session_limits(settings), now=clock()
        )
        if found is not None:
            user, login = found
            return Principal(user=user, via="session", csrf_token=login.csrf_token)
    return Principal(user=None, via="anonymous")


PrincipalDep = Annotated[Principal, Depends(get_principal)]


def actor_of(user: User, request: Request) -> Actor:
    """The audit log's "who" and "from where" for ``user``'s request."""
    return Actor.of_user(user, client_address(request))


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def http_refusal(refusal: AccessRefused) -> HTTPException:
    """The API's answer to a refusal: 401 with how to authenticate, or 403 with why."""
    if isinstance(refusal, LoginNeeded):
        return HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "This call needs a login or an API token: send 'Authorization: Bearer <api_token>'.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    if isinstance(refusal, CsrfMismatch):
        return HTTPException(
            status.HTTP_403_FORBIDDEN,
            f"A write with the session cookie needs the page's CSRF token in {CSRF_HEADER}.",
        )
    return HTTPException(status.HTTP_403_FORBIDDEN, str(refusal))


async def user_api_guard(request: Request, principal: PrincipalDep, settings: SettingsDep) -> None:
    """The access rule of every user-API route (see the module docstring)."""
    _guard(request, principal, settings, write_role="operator")


async def account_api_guard(
    request: Request, principal: PrincipalDep, settings: SettingsDep
) -> None:
    """As :func:`user_api_guard`, but any user may write (their own tokens); routes narrow it."""
    _guard(request, principal, settings, write_role="viewer")


def _guard(request: Request, principal: Principal, settings: Settings, *, write_role: str) -> None:
    try:
        if request.method in SAFE_METHODS:
            access.check_read(principal, anonymous_read=settings.anonymous_read)
        else:
            access.check_write(
                principal, role=write_role, csrf_token=request.headers.get(CSRF_HEADER)
            )
    except AccessRefused as refusal:
        raise http_refusal(refusal) from None


def _user_with(principal: Principal, role: str) -> User:
    try:
        return access.require_role(principal, role)
    except AccessRefused as refusal:
        raise http_refusal(refusal) from None


async def get_current_user(principal: PrincipalDep) -> User:
    return _user_with(principal, "viewer")


async def get_operator(principal: PrincipalDep) -> User:
    return _user_with(principal, "operator")


async def get_admin(principal: PrincipalDep) -> User:
    return _user_with(principal, "admin")


CurrentUser = Annotated[User, Depends(get_current_user)]
OperatorUser = Annotated[User, Depends(get_operator)]
AdminUser = Annotated[User, Depends(get_admin)]
