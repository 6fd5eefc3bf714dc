"""The daemon loop: drain the spool, long-poll for a job, run it, spool and send its end.

While a job runs, a heartbeat keeps its lease (and learns of a cancellation),
and the program's diagnostics stream to the server in sequenced chunks.

Nothing reaches the server that was not spooled first, and the spool is
drained before every claim: the server answers a claim with this agent's
unfinished job, so claiming while a finish message is still spooled would run
that job twice.  Errors back off with full jitter; polls after an empty
long-poll are jittered so a lab's agents do not fall into step.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable
from typing import Any

from xaclab_agent.client import NO_RETRY, AgentClient, Job, RetryPolicy
from xaclab_agent.config import Config
from xaclab_agent.errors import BuildError, SuiteError, UnavailableError
from xaclab_agent.heartbeat import Heartbeat
from xaclab_agent.hygiene import HygieneError
from xaclab_agent.joblog import LogStreamer
from xaclab_agent.jobrun import JobHooks, execute_job, recover
from xaclab_agent.progress import Progress, ProgressReporter
from xaclab_agent.results import chunk_results
from xaclab_agent.runner import RunOutcome
from xaclab_agent.spool import DrainReport, Spool
from xaclab_agent.writecache import WriteCacheError

DRAIN_RETRY = RetryPolicy(attempts=3, base_delay=0.5, max_delay=5.0)
LOG_RETRY = RetryPolicy(attempts=3, base_delay=0.5, max_delay=4.0)
BACKOFF_BASE = 1.0
BACKOFF_CAP = 60.0
POLL_JITTER = 1.0

log = logging.getLogger(__name__)
job_log = logging.getLogger("xaclab_agent.job")


class Stopping(Exception):
    """Raised by the signal handler to leave an idle wait (a long poll or a pause)."""


class Daemon:
    def __init__(
        self,
        config: Config,
        client: AgentClient,
        *,
        fingerprint: dict[str, Any],
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.client = client
        self.fingerprint = fingerprint
        self.spool = Spool(config.spool_dir)
        self.stop = threading.Event()
        self._idle = False
        self._rng = rng or random.Random()
        self._failures = 0

    def request_stop(self, signum: int = 0, _frame: object = None) -> None:
        """Signal handler: finish the current job's bookkeeping, or leave an idle wait."""
        log.info("stop requested (signal %s)", signum)
        self.stop.set()
        if self._idle:
            raise Stopping

    def run(self, *, once: bool = False) -> int:
        """Serve jobs until stopped; with ``once``, one claim.  0 when nothing is left over."""
        recover(self.config)
        try:
            while not self.stop.is_set():
                if self.drain().remaining:
                    if once:
                        return 1
                    self._pause(self._backoff())
                    continue
                try:
                    job = self._idle_call(lambda: self.client.claim(wait=self.config.claim_wait))
                except UnavailableError as exc:
                    log.warning("claim failed: %s", exc)
                    if once:
                        return 1
                    self._pause(self._backoff())
                    continue
                self._failures = 0
                if job is not None:
                    self.process(job)
                if once:
                    break
                if job is None:
                    self._pause(self._rng.uniform(0, POLL_JITTER))
        except Stopping:
            log.info("stopped while idle")
        return 0 if not self.spool.pending() else 1

    def process(self, job: Job) -> RunOutcome:
        """Run one job, spool its results and its finish message, then try to send them."""
        log.info(
            "job %d: suite %s, profile %s, params %s",
            job.job_id,
            job.suite,
            job.profile,
            job.params,
        )
        try:
            outcome = self._execute(job)
        except (SuiteError, BuildError, WriteCacheError, HygieneError) as exc:
            outcome = RunOutcome(False, f"refused before running: {exc}")
        except OSError as exc:
            outcome = RunOutcome(False, f"could not start the program: {exc}")
        except Exception as exc:  # a bug in the agent must still end the job, not loop on it
            log.exception("job %d: internal error", job.job_id)
            outcome = RunOutcome(False, f"internal agent error: {type(exc).__name__}: {exc}")
        for chunk in chunk_results(outcome.results):
            self.spool.add_results(job.job_id, chunk)
        self.spool.add_finish(job.job_id, outcome.status, outcome.message)
        log.info("job %d %s: %s", job.job_id, outcome.status, outcome.message)
        self.drain(retry=NO_RETRY if self.stop.is_set() else DRAIN_RETRY)
        return outcome

    def drain(self, *, retry: RetryPolicy = DRAIN_RETRY) -> DrainReport:
        report = self.spool.drain(self.client, retry=retry)
        if report.sent or report.rejected or report.remaining:
            log.info(
                "spool: %d sent (%d duplicate), %d rejected, %d waiting%s",
                report.sent,
                report.duplicates,
                report.rejected,
                report.remaining,
                f" ({report.error})" if report.error else "",
            )
        return report

    def _execute(self, job: Job) -> RunOutcome:
        def send(progress: Progress) -> None:
            self.client.progress(
                job.job_id, fraction=progress.fraction, message=progress.message, retry=NO_RETRY
            )

        def send_log(seq: int, stream: str, text: str) -> None:
            self.client.send_log(job.job_id, seq=seq, stream=stream, text=text, retry=LOG_RETRY)

        def spool_log(seq: int, stream: str, text: str) -> None:
            self.spool.add_log(job.job_id, seq, stream, text)

        def diagnostic(line: str) -> None:
            job_log.info("job %d: %s", job.job_id, line)
            logs.write("stderr", line)

        reporter = ProgressReporter(send, interval=self.config.progress_interval)
        logs = LogStreamer(
            send_log,
            spool_log,
            interval=max(self.config.progress_interval, 1.0),
            cap_bytes=self.config.log_cap_bytes,
        )
        heartbeat = Heartbeat(
            lambda: self.client.heartbeat(job.job_id, retry=NO_RETRY),
            interval=self.config.heartbeat_interval,
        )
        try:
            with heartbeat:
                return execute_job(
                    self.config,
                    suite_name=job.suite,
                    profile=job.profile,
                    params=job.params,
                    fingerprint=self.fingerprint,
                    job_id=job.job_id,
                    hooks=JobHooks(
                        on_progress=reporter.report,
                        on_diagnostic=diagnostic,
                        on_stdout_junk=lambda line: logs.write("stdout", line),
                        stop=self.stop,
                        cancel=heartbeat.cancel,
                        cancel_reason=lambda: heartbeat.reason,
                    ),
                )
        finally:
            reporter.close()
            logs.close()

    def _idle_call(self, call: Callable[[], Job | None]) -> Job | None:
        self._idle = True
        try:
            if self.stop.is_set():
                raise Stopping
            return call()
        finally:
            self._idle = False

    def _pause(self, seconds: float) -> None:
        self._idle = True
        try:
            if self.stop.is_set():
                raise Stopping
            self.stop.wait(seconds)
        finally:
            self._idle = False

    def _backoff(self) -> float:
        self._failures += 1
        ceiling = min(BACKOFF_CAP, BACKOFF_BASE * 2 ** min(self._failures, 10))
        return self._rng.uniform(ceiling / 2, ceiling)
