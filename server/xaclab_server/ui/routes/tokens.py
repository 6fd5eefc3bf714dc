"""The tokens page: a user's own API tokens, made and revoked."""

from fastapi import Request
from fastapi.responses import HTMLResponse, Response

from xaclab_server.api.deps import ClockDep, SessionDep, actor_of
from xaclab_server.services import accounts
from xaclab_server.ui.forms import ViewerForm, submit
from xaclab_server.ui.guards import PageUser, page_router
from xaclab_server.ui.rendering import not_found, refused, render, see_other

router = page_router()


@router.get("/tokens", response_class=HTMLResponse)
def tokens_page(request: Request, session: SessionDep, user: PageUser) -> Response:
    tokens = accounts.list_api_tokens(session=session, user=user)
    return render(request, "tokens.html", {"tokens": tokens})


@router.post("/tokens/{action}", response_class=HTMLResponse)
def token_action(
    request: Request, action: str, session: SessionDep, clock: ClockDep, form: ViewerForm
) -> Response:
    actor = actor_of(form.user, request)

    def act() -> Response:
        if action == "create":
            _row, token = accounts.create_api_token(
                session=session, user=form.user, name=form.get("name"), actor=actor, now=clock()
            )
            return render(
                request,
                "secret.html",
                {
                    "title": "New API token",
                    "secret": token,
                    "help": "Send it as 'Authorization: Bearer <token>'. "
                    "It is shown only this once.",
                },
            )
        if action == "revoke":
            accounts.revoke_api_token(
                session=session,
                user=form.user,
                token_id=int(form.get("token_id", "0")),
                actor=actor,
                now=clock(),
            )
            return see_other("/tokens")
        return not_found(request, f"Action {action!r}")

    return submit(act, refused=lambda why: refused(request, why, 422))
