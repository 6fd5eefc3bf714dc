"""A cap on request bodies, and UTF-8 for text bodies, enforced before anything parses them.

Bodies are read up to the cap and replayed to the application; a body that
announces or turns out to exceed it is answered ``413`` at once, so a huge
upload never reaches the JSON decoder.  A JSON, form or text body that is
not UTF-8 is answered ``400`` with a sentence saying where it stops being
UTF-8, rather than the parsers' vaguer refusals.
"""

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodySizeLimit:
    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    announced = int(value)
                except ValueError:
                    announced = 0
                if announced > self.max_bytes:
                    await self._refuse(send, announced)
                    return
        chunks: list[bytes] = []
        total = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            total += len(chunk)
            if total > self.max_bytes:
                await self._refuse(send, total)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if _declares_text(scope):
            try:
                body.decode("utf-8")
            except UnicodeDecodeError as exc:
                await _answer(
                    send,
                    400,
                    f"The request body is not UTF-8 (byte {exc.start} is not): send JSON and "
                    "forms as UTF-8.",
                )
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: Send, size: int) -> None:
        detail = (
            f"The request body is larger than {self.max_bytes} bytes "
            f"({size} bytes or more); split the upload."
        )
        await _answer(send, 413, detail)


TEXT_TYPES = (b"application/json", b"application/x-www-form-urlencoded", b"text/")


def _declares_text(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name == b"content-type":
            return bool(value.strip().lower().startswith(TEXT_TYPES))
    return False


async def _answer(send: Send, status: int, detail: str) -> None:
    payload = json.dumps({"detail": detail}).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
