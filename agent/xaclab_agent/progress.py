"""Progress lines on a program's stderr (``xaclab-progress <fraction> <message>``)
and a reporter that forwards them to the server, rate-limited, off the reading thread."""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

PREFIX = "xaclab-progress"
MAX_MESSAGE = 500

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Progress:
    fraction: float
    message: str


def parse_progress_line(line: str) -> Progress | None:
    """The progress in ``line``, or ``None`` if it is an ordinary diagnostic line."""
    parts = line.rstrip("\r\n").split(None, 2)
    if len(parts) < 2 or parts[0] != PREFIX:
        return None
    try:
        fraction = float(parts[1])
    except ValueError:
        return None
    if not math.isfinite(fraction) or not 0.0 <= fraction <= 1.0:
        return None
    message = parts[2].strip() if len(parts) == 3 else ""
    return Progress(fraction, message[:MAX_MESSAGE])


class ProgressReporter:
    """Sends the latest progress at most once per ``interval`` seconds from its own thread.

    The stderr reader only drops the newest value in a one-slot mailbox, so a
    slow server never blocks the benchmark's pipe.  Sending is best effort: a
    lost progress message is superseded by the next one.
    """

    def __init__(
        self,
        send: Callable[[Progress], None],
        *,
        interval: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._send = send
        self._interval = interval
        self._clock = clock
        self._cond = threading.Condition()
        self._pending: Progress | None = None
        self._closed = False
        self._last_sent = -math.inf
        self._thread = threading.Thread(target=self._loop, name="progress", daemon=True)
        self._thread.start()

    def report(self, progress: Progress) -> None:
        with self._cond:
            self._pending = progress
            self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                wait = self._last_sent + self._interval - self._clock()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                progress, self._pending = self._pending, None
                self._last_sent = self._clock()
            assert progress is not None
            try:
                self._send(progress)
            except Exception as exc:  # best effort: a failed send never kills the job
                log.warning("progress not sent: %s", exc)
