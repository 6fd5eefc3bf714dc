"""Who may see a page: the access rule of :mod:`xaclab_server.core.access`, answered as a page.

A page's guard is a dependency (:data:`PageReader`, :data:`PageUser`, or a
form's in :mod:`.forms`): it puts the principal on ``request.state`` for
:func:`.rendering.render` and makes the same checks as the API.  The routes
of a :func:`page_router` answer a refusal, from a guard or a handler, with
a redirect to the login when nobody is logged in, else a 403 page that
says why.
"""

from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from fastapi.routing import APIRoute

from xaclab_server.api.deps import PrincipalDep, SettingsDep
from xaclab_server.core import access
from xaclab_server.core.access import AccessRefused, LoginNeeded, Principal, RoleTooLow
from xaclab_server.models import User
from xaclab_server.ui.rendering import login_redirect, refused


def refusal_page(request: Request, refusal: AccessRefused) -> Response:
    if isinstance(refusal, LoginNeeded):
        return login_redirect(request)
    if isinstance(refusal, RoleTooLow):
        return refused(
            request, f"This needs the {refusal.role} role; yours is {refusal.user.role}."
        )
    return refused(request, "The form was stale; reload it.")


class PageRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def page_handler(request: Request) -> Response:
            try:
                return await handler(request)
            except AccessRefused as refusal:
                return refusal_page(request, refusal)

        return page_handler


def page_router() -> APIRouter:
    return APIRouter(include_in_schema=False, route_class=PageRoute)


async def page_reader(
    request: Request, principal: PrincipalDep, settings: SettingsDep
) -> Principal:
    """Anyone who may read pages: a logged-in user, or anybody while anonymous reading is on."""
    request.state.principal = principal
    access.check_read(principal, anonymous_read=settings.anonymous_read)
    return principal


async def page_user(request: Request, principal: PrincipalDep) -> User:
    """A logged-in user, even while anonymous reading is on (pages of the user's own things)."""
    request.state.principal = principal
    return access.require_role(principal, "viewer")


PageReader = Annotated[Principal, Depends(page_reader)]
PageUser = Annotated[User, Depends(page_user)]
