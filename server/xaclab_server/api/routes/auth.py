"""Logging in and out from scripts or the browser's JavaScript (the pages use forms).

``POST /api/v1/login`` is the one user-API write that needs no login; it
sets the HttpOnly, SameSite=Lax session cookie and returns the CSRF token
that cookie-borne writes must echo in ``X-CSRF-Token``.  Failed logins are
throttled per account and per client address (``services/throttle.py``):
``429`` with ``Retry-After`` while blocked, ``401`` for every wrong try.
"""

from fastapi import APIRouter, HTTPException, Request, Response, status

from xaclab_server.api.deps import (
    ClockDep,
    PrincipalDep,
    SessionDep,
    SettingsDep,
    ThrottleDep,
    actor_of,
    client_address,
    session_limits,
)
from xaclab_server.core.cookies import set_session_cookie
from xaclab_server.core.metrics import THROTTLED
from xaclab_server.core.security import SESSION_COOKIE
from xaclab_server.schemas.account import LoginIn, Me
from xaclab_server.services import accounts, logins

router = APIRouter(prefix="/api/v1", tags=["accounts"])


@router.post(
    "/login",
    responses={
        401: {"description": "The username or password is wrong."},
        429: {"description": "Too many failed logins; retry after Retry-After seconds."},
    },
)
def login(
    body: LoginIn,
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    throttle: ThrottleDep,
    response: Response,
) -> Me:
    attempt = logins.Attempt(body.username, body.password, client_address(request))
    try:
        new = logins.log_in(
            session=session, throttle=throttle, attempt=attempt, limits=session_limits(settings)
        )
    except logins.Throttled as refusal:
        THROTTLED.labels(kind="login").inc()
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            logins.throttled_sentence(refusal),
            headers={"Retry-After": str(refusal.retry_after)},
        ) from None
    except logins.LoginRefused as refusal:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, str(refusal)) from None
    set_session_cookie(response, settings, new.token)
    return Me(
        username=new.user.username, role=new.user.role, via="session", csrf_token=new.csrf_token
    )


@router.post("/logout")
def logout(
    request: Request,
    session: SessionDep,
    principal: PrincipalDep,
    clock: ClockDep,
    response: Response,
) -> Me:
    """Ends this browser's session; needs no CSRF token, since logging out is harmless."""
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        who = principal.user if principal.via == "session" else None
        actor = actor_of(who, request) if who is not None else None
        accounts.end_session(session=session, token=cookie, actor=actor, now=clock())
    response.delete_cookie(SESSION_COOKIE, path="/")
    return Me(username=None, role=None, via="anonymous")


@router.get("/me")
def read_me(principal: PrincipalDep) -> Me:
    user = principal.user
    return Me(
        username=user.username if user else None,
        role=user.role if user else None,
        via=principal.via,
        csrf_token=principal.csrf_token,
    )
