"""Logging in and out from scripts or the browser's JavaScript (the pages use forms).

``POST /api/v1/login`` is the one user-API write that needs no login; it
sets the HttpOnly, SameSite=Lax session cookie and returns the CSRF token
that cookie-borne writes must echo in ``X-CSRF-Token``.
"""

from fastapi import APIRouter, HTTPException, Request, Response, status

from xaclab_server.api.deps import PrincipalDep, SessionDep, SettingsDep
from xaclab_server.core.cookies import set_session_cookie
from xaclab_server.core.security import SESSION_COOKIE
from xaclab_server.schemas.account import LoginIn, Me
from xaclab_server.services import accounts

router = APIRouter(prefix="/api/v1", tags=["accounts"])


@router.post("/login")
def login(body: LoginIn, session: SessionDep, settings: SettingsDep, response: Response) -> Me:
    user = accounts.authenticate(session=session, username=body.username, password=body.password)
    if user is None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "The username or password is wrong.")
    new = accounts.start_session(session=session, user=user, hours=settings.session_hours)
    set_session_cookie(response, settings, new.token)
    return Me(username=user.username, role=user.role, via="session", csrf_token=new.csrf_token)


@router.post("/logout")
def logout(request: Request, session: SessionDep, response: Response) -> Me:
    """Ends this browser's session; needs no CSRF token, since logging out is harmless."""
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        accounts.end_session(session=session, token=cookie)
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
