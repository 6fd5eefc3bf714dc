"""The lab watching itself: detection after uploads, bisections, webhook deliveries.

Each server process runs two loops (:meth:`Watcher.run`,
:meth:`Watcher.run_deliveries`) every ``watch_seconds``, and at once when an
upload pokes them (:meth:`Watcher.poke`, from any thread):

1. **detection**: every series an upload marked ``pending`` is claimed (so
   two processes never detect one series at once), detected
   (:mod:`.detection`), and its new change points get a webhook message
   (``alert.new``) in the same transaction; with ``auto_bisect`` the pass's new
   regressions between two libxac revisions start a bisection, one per
   machine and revision range (the series one commit slowed share it): that of
   the change with the strongest evidence (its change in units of its noise);
2. **bisections**: each running bisection whose run has finished takes its
   point and queues its next run or finishes (``bisection.done`` message);
3. **deliveries** (their own loop, so a slow receiver delays no detection):
   due webhook messages are posted (:mod:`.webhooks`).

An upload only marks series and pokes: it never waits for detection, and
nothing here ever waits for an upload.
"""

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime, timedelta

import httpx
from fastapi.concurrency import run_in_threadpool
from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from xaclab_server.core.config import Settings
from xaclab_server.models import Bisection, ChangePoint, Machine, Series
from xaclab_server.models.base import utcnow
from xaclab_server.services import alerts, bisect_choice, bisection, webhooks
from xaclab_server.services.detection import Views, detect_series, detector_views
from xaclab_server.services.libxac_git import LibxacGit
from xaclab_server.services.notifier import JobNotifier
from xaclab_server.services.reference_view import SiblingCache

log = logging.getLogger(__name__)

CLAIM_SECONDS = 120
SERIES_PER_PASS = 500


class Watcher:
    def __init__(
        self,
        *,
        factory: sessionmaker[Session],
        settings: Settings,
        notifier: JobNotifier,
        git: LibxacGit | None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.factory = factory
        self.settings = settings
        self.notifier = notifier
        self.git = git
        self.clock = clock
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake = asyncio.Event()
        self._deliver = asyncio.Event()

    def poke(self) -> None:
        """Wake both loops soon; safe from any thread, a no-op while they do not run."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._wake.set)
            loop.call_soon_threadsafe(self._deliver.set)

    # -- one pass, synchronous (tests call these directly) ---------------------------

    def run_pass(self) -> list[int]:
        """Detect every pending series, then advance bisections; the new change points' ids."""
        new = self.detect_pending()
        self.advance_bisections()
        return new

    def detect_pending(self) -> list[int]:
        views = detector_views(self.settings)
        siblings: SiblingCache = {}  # read once for the series of one upload
        created: list[int] = []
        for _ in range(SERIES_PER_PASS):
            series_id = self._claim_series()
            if series_id is None:
                break
            try:
                created.extend(self._detect(series_id, views, siblings))
            except Exception:
                log.exception("change-point detection of series %s failed", series_id)
                self._release(series_id, pending=True)
        if created:
            self._auto_bisect(created, siblings)
        return created

    def _claim_series(self) -> int | None:
        now = self.clock()
        with self.factory() as session:
            series_id = session.scalar(
                select(Series.id)
                .where(
                    Series.pending.is_(True),
                    or_(Series.claimed_until.is_(None), Series.claimed_until < now),
                )
                .order_by(Series.last_point_at, Series.id)
                .limit(1)
                .with_for_update(skip_locked=True)
            )
            if series_id is None:
                return None
            session.execute(
                update(Series)
                .where(Series.id == series_id)
                .values(pending=False, claimed_until=now + timedelta(seconds=CLAIM_SECONDS))
                .execution_options(synchronize_session=False)
            )
            session.commit()
            return series_id

    def _release(self, series_id: int, *, pending: bool) -> None:
        with self.factory() as session:
            values: dict[str, object] = {"claimed_until": None}
            if pending:
                values["pending"] = True
            session.execute(update(Series).where(Series.id == series_id).values(**values))
            session.commit()

    def _detect(self, series_id: int, views: Views, siblings: SiblingCache) -> list[int]:
        now = self.clock()
        with self.factory() as session:
            series = session.get_one(Series, series_id)
            found = detect_series(
                session=session,
                series=series,
                views=views,
                history=self.settings.change_history,
                now=now,
                siblings=siblings,
            )
            machine = session.get_one(Machine, series.machine_id)
            for change in found.new:
                webhooks.queue_message(
                    session=session,
                    event="alert.new",
                    payload={"alert": self._view(change, series, machine.name)},
                    change_point_id=change.id,
                )
            series.claimed_until = None
            session.commit()
            if found.new:
                log.info(
                    "series %s: %d new change point(s) %s",
                    series.key,
                    len(found.new),
                    [c.id for c in found.new],
                )
            return [c.id for c in found.new]

    def _auto_bisect(self, new: list[int], siblings: SiblingCache) -> None:
        """With ``auto_bisect``, one bisection per machine and revision range among the new
        regressions: of the change whose two sides lie furthest apart in their own spread
        (services/bisect_choice.py)."""
        with self.factory() as session:
            if not webhooks.watch_settings(session).auto_bisect:
                session.commit()
                return
            strongest: dict[tuple[int, str, str], tuple[float, ChangePoint]] = {}
            for change_id in new:
                change = session.get_one(ChangePoint, change_id)
                series = session.get_one(Series, change.series_id)
                if not bisection.auto_bisect_wanted(
                    session=session, change=change, series=series, git=self.git
                ):
                    continue
                key = (series.machine_id, change.before_revision, change.after_revision)
                evidence = bisect_choice.separation(
                    session=session,
                    change=change,
                    series=series,
                    history=self.settings.change_history,
                    siblings=siblings,
                )
                if key not in strongest or evidence > strongest[key][0]:
                    strongest[key] = (evidence, change)
            for _evidence, change in strongest.values():
                try:
                    started = bisection.start_bisection(
                        session=session, change=change, git=self.git, user_id=None, now=self.clock()
                    )
                except bisection.BisectionRefused as exc:
                    session.rollback()
                    log.info("no automatic bisection of change point %s: %s", change.id, exc)
                    continue
                log.info(
                    "bisection %s started by itself for change point %s", started.id, change.id
                )
                self.notifier.notify()

    def advance_bisections(self) -> list[int]:
        """Advance every running bisection whose run finished; the ids of those that moved."""
        moved = []
        with self.factory() as session:
            ids = [b.id for b in bisection.active_bisections(session)]
        for bisection_id in ids:
            with self.factory() as session:
                found = session.get(Bisection, bisection_id)
                if found is None:
                    continue
                changed = bisection.advance(
                    session=session,
                    bisection=found,
                    settings=self.settings,
                    now=self.clock(),
                    subject=self._subject,
                )
                if not changed:
                    continue
                moved.append(bisection_id)
                if found.state != "running":
                    self._tell_finished(session, found)
                session.commit()
                self.notifier.notify()
        return moved

    def _tell_finished(self, session: Session, done: Bisection) -> None:
        row = alerts.get_alert(session=session, alert_id=done.change_point_id)
        if row is None:
            return
        change, series, machine = row
        webhooks.queue_message(
            session=session,
            event="bisection.done" if done.state == "done" else "bisection.failed",
            payload={"alert": self._view(change, series, machine, done)},
            change_point_id=change.id,
        )

    def _subject(self, revision: str) -> str:
        if self.git is None:
            return ""
        try:
            return self.git.subject(revision)
        except OSError:
            return ""

    def _view(
        self, change: ChangePoint, series: Series, machine: str, done: Bisection | None = None
    ) -> dict[str, object]:
        return alerts.alert_view(
            change, series, machine, done, base_url=(self.settings.public_url or "").rstrip("/")
        )

    def deliver(self, client: httpx.Client) -> list[int]:
        return webhooks.deliver_due(
            factory=self.factory, settings=self.settings, client=client, now=self.clock
        )

    # -- the loops ---------------------------------------------------------------

    async def run(self) -> None:
        self._loop = asyncio.get_running_loop()
        interval = self.settings.watch_seconds
        while True:
            try:
                new = await run_in_threadpool(self.run_pass)
                if new:
                    self._deliver.set()
            except Exception:  # the loop must outlive a database restart
                log.exception("the watcher's pass failed; trying again in %s s", interval)
            await _wait(self._wake, interval)

    async def run_deliveries(self) -> None:
        self._loop = asyncio.get_running_loop()
        interval = self.settings.watch_seconds
        # No proxy from the environment: the receiver is the admin's URL, reached directly.
        with httpx.Client(trust_env=False) as client:
            while True:
                try:
                    await run_in_threadpool(self.deliver, client)
                except Exception:
                    log.exception("webhook delivery failed; trying again in %s s", interval)
                await _wait(self._deliver, interval)


async def _wait(event: asyncio.Event, seconds: float) -> None:
    try:
        await asyncio.wait_for(event.wait(), timeout=seconds)
    except TimeoutError:
        pass
    event.clear()
