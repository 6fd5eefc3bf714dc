"""A webhook receiver: a local HTTP server that keeps every JSON body POSTed to it.

``with Receiver().running() as receiver:`` serves on a free loopback port
(``receiver.url``) from a thread until the block ends; ``bodies`` and
``headers`` hold what arrived, in order; ``status`` is the answer it gives
(204 unless told otherwise, e.g. 503 to play a receiver that is down).
"""

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    def __init__(self, status: int = 204) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.status = status
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length", "0"))
                receiver.bodies.append(json.loads(self.rfile.read(length)))
                receiver.headers.append(dict(self.headers))
                self.send_response(receiver.status)
                self.end_headers()

            def log_message(self, *_args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/xaclab"

    @contextmanager
    def running(self) -> Iterator["Receiver"]:
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()
            thread.join()

    def events(self) -> list[str]:
        return [str(body.get("event")) for body in self.bodies]
