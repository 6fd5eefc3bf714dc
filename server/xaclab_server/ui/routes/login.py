"""Logging in with the login form, and logging out.

The login form has no session yet, so a double-submit cookie guards it
instead of the session's CSRF token: the page sets a random token in a
cookie that only /login receives, and the post must echo it.  A login is
throttled and audited like the API's (``services/logins.py``).  Logging out
ends the session only for a post with the session's CSRF token (a forged
post cannot log anybody out), but drops the cookie in any case.
"""

from contextlib import suppress

from fastapi import Request
from fastapi.responses import HTMLResponse, Response

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
from xaclab_server.core import access
from xaclab_server.core.access import AccessRefused, Principal
from xaclab_server.core.cookies import set_session_cookie
from xaclab_server.core.metrics import THROTTLED
from xaclab_server.core.security import (
    CSRF_FIELD,
    LOGIN_CSRF_COOKIE,
    MAX_PASSWORD,
    MAX_USERNAME,
    SESSION_COOKIE,
    new_token,
    same_secret,
)
from xaclab_server.services import accounts, logins
from xaclab_server.ui.forms import FormDep
from xaclab_server.ui.guards import page_router
from xaclab_server.ui.rendering import render, see_other

router = page_router()

NOBODY = Principal(user=None, via="anonymous")  # the login page shows no one as logged in


def safe_next(target: str) -> str:
    # Only paths on this server: never '//host' or a full URL.
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def login_form(request: Request, *, target: str, error: str | None, status: int) -> Response:
    token = new_token()
    response = render(
        request,
        "login.html",
        {"login_csrf": token, "next": target, "error": error},
        status,
        NOBODY,
    )
    response.set_cookie(
        LOGIN_CSRF_COOKIE,
        token,
        httponly=True,
        samesite="strict",
        path="/login",
        secure=request.app.state.settings.cookies_secure,
    )
    return response


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, next: str = "/") -> Response:
    return login_form(request, target=safe_next(next), error=None, status=200)


@router.post("/login", response_class=HTMLResponse)
def login_submit(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    throttle: ThrottleDep,
    form: FormDep,
) -> Response:
    target = safe_next(form.get("next", "/"))
    if not same_secret(form.get(CSRF_FIELD), request.cookies.get(LOGIN_CSRF_COOKIE)):
        return render(
            request,
            "login.html",
            {"login_csrf": "", "next": target, "error": "The form was stale; reload the page."},
            403,
            NOBODY,
        )
    username, password = form.get("username"), form.get("password")
    too_long = login_field_problem(username, password)
    if too_long:
        return login_form(request, target=target, error=too_long, status=422)
    attempt = logins.Attempt(username, password, client_address(request))
    try:
        new = logins.log_in(
            session=session, throttle=throttle, attempt=attempt, limits=session_limits(settings)
        )
    except logins.Throttled as refusal:
        THROTTLED.labels(kind="login").inc()
        response = login_form(
            request, target=target, error=logins.throttled_sentence(refusal), status=429
        )
        response.headers["Retry-After"] = str(refusal.retry_after)
        return response
    except logins.LoginRefused as refusal:
        return login_form(request, target=target, error=str(refusal), status=401)
    response = see_other(target)
    set_session_cookie(response, settings, new.token)
    response.delete_cookie(LOGIN_CSRF_COOKIE, path="/login")
    return response


def login_field_problem(username: str, password: str) -> str | None:
    """A sentence for a username or password longer than any account can have."""
    if len(username) > MAX_USERNAME:
        return f"A username has at most {MAX_USERNAME} characters."
    if len(password) > MAX_PASSWORD:
        return f"A password has at most {MAX_PASSWORD} characters."
    return None


@router.post("/logout")
def logout_submit(
    request: Request,
    session: SessionDep,
    principal: PrincipalDep,
    clock: ClockDep,
    form: FormDep,
) -> Response:
    with suppress(AccessRefused):
        user = access.check_write(
            principal, role="viewer", csrf_token=form.get(CSRF_FIELD), session_only=True
        )
        accounts.end_session(
            session=session,
            token=request.cookies[SESSION_COOKIE],
            actor=actor_of(user, request),
            now=clock(),
        )
    response = see_other("/")
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response
