"""Error replies: always ``{"detail": "<sentence>"}`` (docs/agent-protocol.md)."""

from fastapi import Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DataError


def validation_sentence(exc: RequestValidationError) -> str:
    parts = []
    for error in exc.errors()[:3]:
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    more = len(exc.errors()) - len(parts)
    tail = f" (and {more} more)" if more > 0 else ""
    return "The request is not valid: " + "; ".join(parts) + tail + "."


async def request_validation_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return JSONResponse(
        status_code=422,
        content={
            "detail": validation_sentence(exc),
            "errors": jsonable_encoder(exc.errors(), custom_encoder={Exception: str}),
        },
    )


async def data_error_handler(request: Request, exc: Exception) -> JSONResponse:
    """A value the database refuses although the request was well formed: on PostgreSQL an
    id beyond the integer columns' range (an id no row can have), a 422 rather than a 500."""
    assert isinstance(exc, DataError)
    return JSONResponse(
        status_code=422,
        content={"detail": "A number in the request is out of the range the database stores."},
    )
