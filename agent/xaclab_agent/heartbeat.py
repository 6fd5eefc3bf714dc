"""The job's lease: a heartbeat every ``interval`` seconds while a job runs.

The server requeues (once) or fails a running job whose heartbeat is older
than its lease (``XACLAB_LEASE_SECONDS``).  The heartbeat's reply carries
``cancel``: when it is true, or when the server answers 409 (the job is no
longer this agent's to run), :attr:`Heartbeat.cancel` is set and the runner
stops the program.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from xaclab_agent.client import JobState
from xaclab_agent.errors import ConflictError, ProtocolError

log = logging.getLogger(__name__)


class Heartbeat:
    def __init__(self, beat: Callable[[], JobState], *, interval: float) -> None:
        self.cancel = threading.Event()
        self.reason = ""
        self._beat = beat
        self._interval = interval
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._done.wait(self._interval):
            try:
                state = self._beat()
            except ConflictError as exc:
                self._cancel(f"the server no longer lets this agent run the job ({exc.detail})")
                return
            except ProtocolError as exc:
                # The lease is long enough to ride out a short outage; the next beat retries.
                log.warning("heartbeat not delivered: %s", exc)
                continue
            if state.cancel:
                self._cancel("the job was cancelled on the server")
                return

    def _cancel(self, reason: str) -> None:
        log.info("stopping the job: %s", reason)
        self.reason = reason
        self.cancel.set()
