"""Rendering a page: the templates, the context every page has, and the usual answers.

Every page shows who is logged in (``me``) and carries the session's CSRF
token for its forms; both come from the principal that the page's guard
(:mod:`.guards`) put on ``request.state``.
"""

from typing import Any
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from xaclab_server.core.access import Principal
from xaclab_server.core.headers import CSP
from xaclab_server.core.paths import PACKAGE_DIR
from xaclab_server.ui.figures import TEMPLATE_GLOBALS

templates = Jinja2Templates(directory=PACKAGE_DIR / "templates")
templates.env.globals.update(TEMPLATE_GLOBALS)


def render(
    request: Request,
    name: str,
    context: dict[str, Any],
    status: int = 200,
    principal: Principal | None = None,
) -> Response:
    principal = principal or getattr(request.state, "principal", None)
    context = {
        "me": principal.user if principal else None,
        "csrf_token": principal.csrf_token if principal else None,
        "anonymous_read": request.app.state.settings.anonymous_read,
        **context,
    }
    response = templates.TemplateResponse(request, name, context, status_code=status)
    response.headers["Content-Security-Policy"] = CSP
    return response


def not_found(request: Request, what: str) -> Response:
    return render(request, "not_found.html", {"what": what}, 404)


# A refusal's heading says which kind it is: 403 is about who asks, 422 about
# what was asked (a form's value, a link missing its fields).
REFUSAL_HEADINGS = {403: "Not allowed", 422: "Not accepted"}


def refused(request: Request, why: str, status: int = 403) -> Response:
    heading = REFUSAL_HEADINGS.get(status, "Refused")
    return render(request, "refused.html", {"why": why, "heading": heading}, status)


def see_other(target: str) -> Response:
    """Where the browser goes after a form that did its work (post/redirect/get)."""
    return RedirectResponse(target, status_code=303)


def login_redirect(request: Request) -> Response:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return see_other(f"/login?next={quote(target, safe='')}")
