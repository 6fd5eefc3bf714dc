"""The users page (admins only): users made, given a role or a new password, disabled.

A new password or role, or disabling, ends the user's sessions and API tokens
(``accounts.update_user``)."""

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select

from xaclab_server.api.deps import ClockDep, SessionDep, actor_of
from xaclab_server.core import access
from xaclab_server.core.access import RoleTooLow
from xaclab_server.models import User
from xaclab_server.models.user import ROLES
from xaclab_server.services import accounts
from xaclab_server.ui.forms import AdminForm, submit
from xaclab_server.ui.guards import PageUser, page_router
from xaclab_server.ui.rendering import not_found, refused, render, see_other

router = page_router()


@router.get("/users", response_class=HTMLResponse)
def users_page(request: Request, session: SessionDep, user: PageUser) -> Response:
    try:
        access.check_role(user, "admin")
    except RoleTooLow:
        return refused(request, "Only admins manage users.")
    users = session.scalars(select(User).order_by(User.username)).all()
    return render(request, "users.html", {"users": users, "roles": ROLES})


@router.post("/users/{action}", response_class=HTMLResponse)
def user_action(
    request: Request, action: str, session: SessionDep, clock: ClockDep, form: AdminForm
) -> Response:
    actor = actor_of(form.user, request)

    def act() -> Response:
        if action == "create":
            accounts.create_user(
                session=session,
                username=form.get("username"),
                password=form.get("password"),
                role=form.get("role", "viewer"),
                actor=actor,
                now=clock(),
            )
        elif action == "update":
            target = session.get(User, int(form.get("user_id", "0")))
            if target is None:
                raise accounts.AccountError("That user does not exist.")
            accounts.update_user(
                session=session,
                user=target,
                actor=actor,
                now=clock(),
                role=form.get("role") or None,
                disabled=form.get("disabled") == "true",
                password=form.get("password") or None,
            )
        else:
            return not_found(request, f"Action {action!r}")
        return see_other("/users")

    return submit(act, refused=lambda why: refused(request, why, 422))
