"""The OpenAPI document says every status code a route can answer, with the body it sends.

FastAPI documents a route's success and, when it has parameters, a 422 whose
``detail`` is a list; this server's errors are ``{"detail": "<sentence>"}``
(:mod:`.errors`), a validation error adds the parser's ``errors``.  So the
document is finished here, from what each route is:

- every error answer's body is :data:`ERROR` (422: :data:`VALIDATION_ERROR`);
- **401** where the route reads an API token, session or agent token (a
  malformed or unknown token is refused on every such route, and reads need a
  login while anonymous reading is off);
- **403** where the route checks a role or the CSRF token of a write, or an
  agent's approval;
- **404** where a path names a row (``{run_id}`` …);
- **400** and **413** where the route takes a body (not UTF-8; larger than
  ``XACLAB_MAX_BODY_BYTES``: :mod:`.limits`);
- **422** where the route takes any parameter or body (and an id beyond the
  database's integer range: :func:`.errors.data_error_handler`);
- anything else a route answers (409, 429 …) it declares itself with
  ``responses=``.

Nothing here guesses from the route's name: the dependencies a route has
decide, so a new route is documented by what it depends on.
"""

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, routing
from fastapi.dependencies.models import Dependant
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute

from xaclab_server.api import deps

ERROR = "Error"
VALIDATION_ERROR = "ValidationError"
SCHEMAS: dict[str, Any] = {
    ERROR: {
        "title": ERROR,
        "type": "object",
        "properties": {"detail": {"type": "string", "description": "What went wrong, a sentence."}},
        "required": ["detail"],
    },
    VALIDATION_ERROR: {
        "title": VALIDATION_ERROR,
        "type": "object",
        "properties": {
            "detail": {"type": "string", "description": "What is not valid, a sentence."},
            "errors": {
                "type": "array",
                "items": {"type": "object"},
                "description": "The parser's findings (location, message), when it made them.",
            },
        },
        "required": ["detail"],
    },
}
DESCRIPTIONS = {
    400: "The body is not UTF-8.",
    401: "No login, API token or agent token, or one that is malformed, unknown or revoked.",
    403: "The role is too low, a cookie write lacks its CSRF token, or the agent waits for "
    "approval.",
    404: "Nothing of that id.",
    409: "The request conflicts with the state it acts on.",
    413: "The body is larger than the server accepts.",
    422: "A parameter or the body is not valid.",
    429: "Too many failed attempts; wait the seconds Retry-After says.",
}
CONFLICT: dict[int | str, dict[str, Any]] = {409: {"description": DESCRIPTIONS[409]}}
# A route that reads its body itself (not through a parameter) says so.
RAW_BODY: dict[int | str, dict[str, Any]] = {
    400: {"description": DESCRIPTIONS[400]},
    413: {"description": DESCRIPTIONS[413]},
}
TOKEN_READERS: tuple[Callable[..., Any], ...] = (deps.get_principal, deps.get_current_agent)
GATEKEEPERS: tuple[Callable[..., Any], ...] = (
    deps.get_current_agent,
    deps.get_current_user,
    deps.get_operator,
    deps.get_admin,
)
GUARDS: tuple[Callable[..., Any], ...] = (deps.user_api_guard, deps.account_api_guard)
SAFE = frozenset({"get", "head", "options"})


def _calls(dependant: Dependant) -> set[Callable[..., Any]]:
    found: set[Callable[..., Any]] = set()
    for sub in dependant.dependencies:
        if sub.call is not None:
            found.add(sub.call)
        found |= _calls(sub)
    return found


def _errors(route: Any, method: str) -> set[int]:
    calls = _calls(route.dependant)
    codes: set[int] = set()
    if calls & set(TOKEN_READERS):
        codes.add(401)
    if calls & set(GATEKEEPERS) or (calls & set(GUARDS) and method not in SAFE):
        codes.add(403)
    if route.dependant.path_params:
        codes |= {404, 422}
    if route.dependant.query_params or route.dependant.header_params:
        codes.add(422)
    if route.dependant.body_params:
        codes |= {400, 413, 422}
    return codes


def _content(schema: str) -> dict[str, Any]:
    return {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}}


def complete(document: dict[str, Any], routes: list[Any]) -> dict[str, Any]:
    """``document`` with every route's error answers and their bodies."""
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    # Ours replace FastAPI's HTTPValidationError and its item, ValidationError, by name.
    schemas.pop("HTTPValidationError", None)
    schemas.update(SCHEMAS)
    for route in routes:
        if not route.include_in_schema:
            continue
        path = document["paths"].get(route.path_format)
        if path is None:
            continue
        for method in route.methods or ():
            operation = path.get(method.lower())
            if operation is None:
                continue
            responses = operation.setdefault("responses", {})
            for code in sorted(_errors(route, method.lower())):
                responses.setdefault(str(code), {"description": DESCRIPTIONS[code]})
            for code, response in responses.items():
                if not code.isdigit() or int(code) < 400:
                    continue
                response.setdefault("description", DESCRIPTIONS.get(int(code), "An error."))
                response["content"] = _content(VALIDATION_ERROR if code == "422" else ERROR)
    return document


def install(app: FastAPI) -> None:
    """Serve the completed document at /openapi.json (built once, on first request)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title,
                version=app.version,
                openapi_version=app.openapi_version,
                description=app.description,
                routes=app.routes,
            )
            # The API routes as mounted: with the dependencies of the routers they are in.
            routes = [
                context
                for context in routing.iter_route_contexts(app.routes)
                if isinstance(context.original_route, APIRoute)
            ]
            app.openapi_schema = complete(document, routes)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
