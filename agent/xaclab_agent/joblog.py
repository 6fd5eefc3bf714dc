"""A job's output streamed to the server in sequenced chunks with a size cap.

Lines are batched per stream and sent from a helper thread when a chunk is
full (``chunk_bytes``) or ``interval`` seconds old, so the benchmark's pipes
never wait for the network.  Every chunk carries the next ``seq``; the server
keeps the first chunk of each ``seq``, so resending one is harmless.  A chunk
the server cannot take now goes to the spool and is resent with the results.
Past ``cap_bytes`` lines are counted, not sent, and one last chunk says how
much was dropped.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from xaclab_agent.errors import RequestRejected, UnavailableError

CHUNK_BYTES = 16 * 1024
CAP_BYTES = 1024 * 1024
MAX_LINE = 4096

log = logging.getLogger(__name__)

Send = Callable[[int, str, str], None]  # seq, stream, text


class LogStreamer:
    def __init__(
        self,
        send: Send,
        spool: Send,
        *,
        interval: float = 2.0,
        chunk_bytes: int = CHUNK_BYTES,
        cap_bytes: int = CAP_BYTES,
    ) -> None:
        self._send = send
        self._spool = spool
        self._interval = interval
        self._chunk_bytes = chunk_bytes
        self._cap_bytes = cap_bytes
        self._cond = threading.Condition()
        self._buffer: list[tuple[str, str]] = []
        self._buffered = 0
        self._accepted = 0
        self._dropped_lines = 0
        self._dropped_bytes = 0
        self._seq = 0
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name="log-streamer", daemon=True)
        self._thread.start()

    def write(self, stream: str, line: str) -> None:
        line = line[:MAX_LINE] + "\n"
        size = len(line.encode("utf-8", "replace"))
        with self._cond:
            if self._accepted + size > self._cap_bytes:
                self._dropped_lines += 1
                self._dropped_bytes += size
                return
            self._accepted += size
            self._buffer.append((stream, line))
            self._buffered += size
            if self._buffered >= self._chunk_bytes:
                self._cond.notify()

    def close(self) -> None:
        """Send (or spool) everything still buffered, plus the note about what was dropped."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()
        if self._dropped_lines:
            note = (
                f"[xaclab-agent: log capped at {self._cap_bytes} bytes; "
                f"{self._dropped_lines} lines ({self._dropped_bytes} bytes) not sent]\n"
            )
            self._deliver([("agent", note)])

    def _loop(self) -> None:
        while True:
            with self._cond:
                if not self._closed and self._buffered < self._chunk_bytes:
                    self._cond.wait(self._interval)
                batch, self._buffer, self._buffered = self._buffer, [], 0
                closed = self._closed
            if batch:
                self._deliver(batch)
            if closed:
                return

    def _deliver(self, batch: list[tuple[str, str]]) -> None:
        """One chunk per run of consecutive lines of the same stream, at most chunk_bytes."""
        chunks: list[tuple[str, list[str]]] = []
        size = 0
        for stream, line in batch:
            if not chunks or chunks[-1][0] != stream or size + len(line) > self._chunk_bytes:
                chunks.append((stream, []))
                size = 0
            chunks[-1][1].append(line)
            size += len(line)
        for stream, lines in chunks:
            self._seq += 1
            text = "".join(lines)
            try:
                self._send(self._seq, stream, text)
            except UnavailableError as exc:
                log.info("log chunk %d spooled: %s", self._seq, exc)
                self._spool(self._seq, stream, text)
            except RequestRejected as exc:
                log.warning("server refused log chunk %d: %s", self._seq, exc)
