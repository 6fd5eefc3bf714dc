"""Wakes long-polling claims in this process when a job is queued.

Claims also poll the database every ``claim_poll_seconds``, which covers jobs
queued by another server process; this only makes the common case immediate.
"""

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class JobNotifier:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    def notify(self) -> None:
        """Wake every waiting claim; safe to call from any thread."""
        with self._lock:
            waiters = list(self._waiters)
        for loop, event in waiters:
            if not loop.is_closed():
                loop.call_soon_threadsafe(event.set)

    @contextmanager
    def subscribe(self) -> Iterator[asyncio.Event]:
        """An event set by the next notify(); subscribe before looking, so none is missed."""
        entry = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiters.add(entry)
        try:
            yield entry[1]
        finally:
            with self._lock:
                self._waiters.discard(entry)
