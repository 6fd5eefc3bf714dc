"""Form posts, handled one way: read the form, check who sent it, call a service, answer.

The guard of a form post (:data:`ViewerForm`, :data:`OperatorForm`,
:data:`AdminForm`) reads the form and makes the write check of
:mod:`xaclab_server.core.access`: a login session (an API token does not
post forms), the role, and the session's CSRF token in the form's
``csrf_token`` field (synchronizer token).  The login form, which has no
session yet, is guarded by a double-submit cookie instead (:mod:`.routes.login`).

:func:`submit` runs the handler's action.  Services refuse with a
``ValueError`` whose message is a sentence (``ParamError``, ``CronError``,
``AccountError``, ``RunRefused`` ...); :func:`submit` shows that sentence
with the form kept, or on a refused page.  On success the action redirects
(:func:`.rendering.see_other`) or shows a page, such as a new secret.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.responses import Response

from xaclab_server.api.deps import PrincipalDep
from xaclab_server.core import access
from xaclab_server.core.security import CSRF_FIELD
from xaclab_server.models import User


@dataclass(frozen=True, slots=True)
class Form:
    """A form's text fields: every value of each (checkboxes repeat a name)."""

    lists: dict[str, list[str]]

    def get(self, name: str, default: str = "") -> str:
        """The field's value (its last, if the form repeats it)."""
        values = self.lists.get(name)
        return values[-1] if values else default

    @property
    def fields(self) -> dict[str, str]:
        return {name: values[-1] for name, values in self.lists.items()}


@dataclass(frozen=True, slots=True)
class FormPost(Form):
    """A form that passed its guard, and the user who sent it."""

    user: User


async def read_form(request: Request) -> Form:
    form = await request.form()
    lists: dict[str, list[str]] = {}
    for name, value in form.multi_items():
        if isinstance(value, str):  # a file field is no text
            lists.setdefault(name, []).append(value)
    return Form(lists)


FormDep = Annotated[Form, Depends(read_form)]


def _guard(role: str) -> Callable[[Request, PrincipalDep, FormDep], Awaitable[FormPost]]:
    async def form_post(request: Request, principal: PrincipalDep, form: FormDep) -> FormPost:
        request.state.principal = principal
        user = access.check_write(
            principal, role=role, csrf_token=form.get(CSRF_FIELD), session_only=True
        )
        return FormPost(form.lists, user)

    return form_post


ViewerForm = Annotated[FormPost, Depends(_guard("viewer"))]
OperatorForm = Annotated[FormPost, Depends(_guard("operator"))]
AdminForm = Annotated[FormPost, Depends(_guard("admin"))]


def sentence(exc: ValueError) -> str:
    """The refusal in words: a validation error's first complaint, or the message."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"{where}: {first.get('msg', 'invalid')}."
    return str(exc)


def submit(action: Callable[[], Response], *, refused: Callable[[str], Response]) -> Response:
    """The answer to a form: ``action``'s, or ``refused(sentence)`` if a service refuses."""
    try:
        return action()
    except ValueError as exc:
        return refused(sentence(exc))
