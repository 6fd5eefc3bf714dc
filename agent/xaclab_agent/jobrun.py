"""One job from its request to its outcome, shared by the daemon and local ``bench``.

A profile with ``repeat_until`` runs the programs several times and pools
their results (:mod:`.repetition`); one with ``best_of`` runs them several
times and keeps each result's best run (:mod:`.best_of`).

Order matters: every check (suite, profile, params, agent-level factors,
the libxac revision built and its smoke tests passed, programs present)
happens before anything changes; then the page cache is dropped and the
write cache set if asked; the programs run; and the write cache is restored
whatever happened.  A refusal raises before anything ran: SuiteError /
ParamError, BuildError, WriteCacheError or HygieneError.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from xaclab_contracts.suites import load_suite

from xaclab_agent.best_of import run_best_of
from xaclab_agent.children import ChildRecord
from xaclab_agent.config import Config
from xaclab_agent.factors import Factors, split_factors
from xaclab_agent.fingerprint import with_storage
from xaclab_agent.hygiene import drop_caches
from xaclab_agent.progress import Progress
from xaclab_agent.repetition import run_repeated
from xaclab_agent.revisions import prepare
from xaclab_agent.runner import RunOutcome, plan_job, run_job
from xaclab_agent.writecache import WriteCacheControl

log = logging.getLogger(__name__)


def _ignore(_: Any) -> None:
    return None


@dataclass
class JobHooks:
    on_progress: Callable[[Progress], None] = _ignore
    on_result: Callable[[dict[str, Any]], None] = _ignore
    on_diagnostic: Callable[[str], None] = _ignore
    on_stdout_junk: Callable[[str], None] = _ignore
    stop: threading.Event = field(default_factory=threading.Event)
    cancel: threading.Event = field(default_factory=threading.Event)
    cancel_reason: Callable[[], str] = lambda: "the job was cancelled"


def write_cache_control(config: Config) -> WriteCacheControl:
    return WriteCacheControl(config.state_dir, mode=config.write_cache_backend)


def execute_job(
    config: Config,
    *,
    suite_name: str,
    profile: str,
    params: object,
    fingerprint: dict[str, Any],
    hooks: JobHooks,
    job_id: int | None = None,
) -> RunOutcome:
    suite = load_suite(suite_name, config.suites_dir)
    config.work_dir.mkdir(parents=True, exist_ok=True)
    factors, rest = split_factors(
        params, allowed_dirs=config.allowed_dirs, default_dir=config.work_dir
    )
    bin_dir = config.bin_dir
    libxac_env: dict[str, Any] = {}
    if factors.libxac_revision is not None:
        build = prepare(config, factors.libxac_revision, hooks.on_diagnostic)
        bin_dir, libxac_env = build.bin_dir, {"libxac": build.env()}
    plan_job(suite, profile, rest, bin_dir)
    target = factors.target_dir or config.work_dir
    env = {**with_storage(fingerprint, target), **libxac_env}
    if factors.drop_caches:
        drop_caches()
    control = write_cache_control(config)
    change = control.apply(target, factors.write_cache, job_id=job_id)
    children = ChildRecord(config.state_dir)
    try:
        env = {**env, "write_cache": change.env, "hygiene": _hygiene_env(factors)}
        extra = {"write_cache": change.state} if change.state in ("on", "off") else {}
        timeouts = [t for t in (factors.timeout, config.job_timeout) if t]
        rule = suite.repeat.get(profile)
        best_of = suite.best_of.get(profile)
        repeated = rule is not None or best_of is not None

        def run_once(on_progress: Callable[[Progress], None], timeout: float | None) -> RunOutcome:
            return run_job(
                suite,
                profile,
                rest,
                bin_dir=bin_dir,
                work_root=target,
                env=env,
                on_progress=on_progress,
                # Repeated runs are pooled (or the best kept) first; the hook sees those.
                on_result=_ignore if repeated else hooks.on_result,
                on_diagnostic=hooks.on_diagnostic,
                on_stdout_junk=hooks.on_stdout_junk,
                on_started=children.started,
                on_exited=children.exited,
                stop=hooks.stop,
                cancel=hooks.cancel,
                timeout=timeout,
                pin_cpu=factors.pin_cpu,
                noisy_threshold=config.noisy_load,
                extra_params=extra,
            )

        timeout = min(timeouts) if timeouts else None

        def stopping() -> bool:
            return hooks.stop.is_set() or hooks.cancel.is_set()

        def wait(seconds: float) -> bool:
            """Pause up to ``seconds``; True when a stop or a cancel came meanwhile."""
            end = time.monotonic() + seconds
            while not stopping():
                left = end - time.monotonic()
                if left <= 0:
                    return False
                hooks.stop.wait(min(left, 0.25))
            return True

        if rule is not None:
            outcome = run_repeated(
                run_once, rule, on_progress=hooks.on_progress, timeout=timeout, stopping=stopping
            )
        elif best_of is not None:
            outcome = run_best_of(
                run_once,
                best_of,
                on_progress=hooks.on_progress,
                timeout=timeout,
                stopping=stopping,
                clock=time.monotonic,
                wait=wait,
            )
        else:
            outcome = run_once(hooks.on_progress, timeout)
        if repeated:
            for result in outcome.results:
                hooks.on_result(result)
    finally:
        problem = control.restore(change)
    if outcome.cancelled:
        outcome.message = f"cancelled: {hooks.cancel_reason()}"
    if problem:
        log.error("%s", problem)
        outcome = RunOutcome(False, f"{outcome.message}; {problem}"[:2000], outcome.results)
    return outcome


def _hygiene_env(factors: Factors) -> dict[str, Any]:
    return {"pinned_cpu": factors.pin_cpu, "dropped_caches": factors.drop_caches}


def recover(config: Config) -> list[str]:
    """At start-up, before any job: stop an orphaned program, then replay the journal."""
    problems = []
    orphan = ChildRecord(config.state_dir).reap_orphan()
    if orphan:
        log.warning("%s", orphan)
    replay = write_cache_control(config).replay()
    if replay:
        log.error("%s", replay)
        problems.append(replay)
    return problems
