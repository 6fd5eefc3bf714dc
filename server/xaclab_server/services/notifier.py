"""Wakes long-polling claims when there may be a job for them.

Two sources: :meth:`JobNotifier.notify`, called by this process when it
queues jobs, wakes every waiting claim at once; and one shared poller per
process (:meth:`JobNotifier.ensure_poller`) that, every ``claim_poll_seconds``
while any claim waits, sweeps expired leases and asks the database in one
query which of the waiting machines have queued jobs (queued by another
server process, a schedule or a requeued lease), and wakes only those.  So
200 idle agents cost one small query per interval, not 200.
"""

import asyncio
import logging
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

import anyio.to_thread

log = logging.getLogger("xaclab_server")

Waiter = tuple[asyncio.AbstractEventLoop, asyncio.Event, int | None]


class JobNotifier:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: set[Waiter] = set()
        self._machines: Counter[int] = Counter()
        self._poller: asyncio.Task[None] | None = None
        self._last_sweep = -math.inf
        # machine id -> monotonic time at which the shared poller last
        # started a look that included it and found no queued job.
        self._idle_at: dict[int, float] = {}

    def sweep_due(self, interval: float) -> bool:
        """Whether this process should sweep expired leases now: at most once per interval,
        whichever claim or poll asks first (a sweep is the same for every machine)."""
        now = time.monotonic()
        with self._lock:
            if now - self._last_sweep < interval:
                return False
            self._last_sweep = now
            return True

    def notify(self) -> None:
        """Wake every waiting claim; safe to call from any thread."""
        with self._lock:
            self._idle_at.clear()  # this process queued jobs: nobody is known idle
        self._wake(lambda _machine: True)

    def known_idle(self, machine_id: int, max_age: float) -> bool:
        """Whether a look that began under ``max_age`` seconds ago found no job for the machine.

        An agent's next long poll can then skip its first claim query and just
        wait: a job queued since then by this process wakes it through
        :meth:`notify`, and one queued elsewhere is found by the next look,
        at most one interval later.  With 200 idle agents this halves the
        database work of a re-poll.
        """
        with self._lock:
            looked = self._idle_at.get(machine_id)
        return looked is not None and time.monotonic() - looked < max_age

    def wake_machines(self, machine_ids: set[int]) -> None:
        """Wake the claims waiting for these machines."""
        self._wake(lambda machine: machine in machine_ids)

    def _wake(self, chosen: Callable[[int | None], bool]) -> None:
        with self._lock:
            waiters = [w for w in self._waiters if chosen(w[2])]
        for loop, event, _machine in waiters:
            if not loop.is_closed():
                loop.call_soon_threadsafe(event.set)

    def waiting_machines(self) -> set[int]:
        with self._lock:
            return set(self._machines)

    @contextmanager
    def subscribe(self, machine_id: int | None = None) -> Iterator[asyncio.Event]:
        """An event set by the next wake-up; subscribe before looking, so none is missed."""
        entry = (asyncio.get_running_loop(), asyncio.Event(), machine_id)
        with self._lock:
            self._waiters.add(entry)
            if machine_id is not None:
                self._machines[machine_id] += 1
        try:
            yield entry[1]
        finally:
            with self._lock:
                self._waiters.discard(entry)
                if machine_id is not None:
                    self._machines[machine_id] -= 1
                    if self._machines[machine_id] <= 0:
                        del self._machines[machine_id]

    def ensure_poller(self, look: Callable[[set[int]], set[int]], interval: float) -> None:
        """Start the shared poller on the running loop unless it runs already.

        ``look(waiting machine ids)`` runs in a worker thread and returns the
        machines to wake.  The poller stops by itself when nobody waits.
        """
        loop = asyncio.get_running_loop()
        with self._lock:
            poller = self._poller
            if poller is not None and not poller.done() and poller.get_loop() is loop:
                return
            self._poller = loop.create_task(self._poll(look, interval))

    async def _poll(self, look: Callable[[set[int]], set[int]], interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            with self._lock:
                waiting = set(self._machines)
                if not waiting:  # under the lock: a new claim starts a new poller
                    if self._poller is asyncio.current_task():
                        self._poller = None
                    return
            started = time.monotonic()  # before the query: what it cannot see is newer
            try:
                found = await anyio.to_thread.run_sync(look, waiting)
            except Exception:  # a database restart must not stop the claims being woken
                log.exception("the shared claim poll failed; trying again in %s s", interval)
                continue
            with self._lock:
                for machine in waiting - found:
                    self._idle_at[machine] = started
                for machine in found:
                    self._idle_at.pop(machine, None)
                if len(self._idle_at) > 4 * len(waiting) + 1024:  # machines long gone
                    self._idle_at = {m: t for m, t in self._idle_at.items() if m in waiting}
            if found:
                self.wake_machines(found)

    async def stop(self) -> None:
        poller, self._poller = self._poller, None
        if poller is not None and not poller.done():
            poller.cancel()
            with suppress(asyncio.CancelledError):
                await poller
