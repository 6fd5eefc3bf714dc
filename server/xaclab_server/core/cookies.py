"""The login session's cookie, set alike by the API's login and the login form."""

from starlette.responses import Response

from xaclab_server.core.config import Settings
from xaclab_server.core.security import SESSION_COOKIE


def set_session_cookie(response: Response, settings: Settings, token: str) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=int(settings.session_hours * 3600),
        httponly=True,
        samesite="lax",
        secure=settings.cookies_secure,
        path="/",
    )
