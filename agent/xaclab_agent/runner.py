"""Run a suite's programs for one job and collect their results.

Each job gets a fresh working directory (its cwd and ``TMPDIR``) under the
directory under test; a suite with a ``dir_flag`` also gets it as that
option.  The programs are started from an argument vector, never through a
shell, one after another.  stdout is read as result lines, stderr as progress
lines and diagnostics, each on its own thread so neither pipe can fill up and
stall the program.  Results are kept until the job ends, then given the
environment they ran in (the fingerprint, and the load before and after).
"""

from __future__ import annotations

import collections
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from xaclab_contracts.suites import Suite

from xaclab_agent.errors import ResultError, SuiteError
from xaclab_agent.hygiene import is_noisy, load_snapshot
from xaclab_agent.progress import Progress, parse_progress_line
from xaclab_agent.results import MAX_LINE_BYTES, MAX_PARAMS, parse_result_line, with_env

MAX_MESSAGE = 2000
STDERR_TAIL = 20
TERMINATE_GRACE = 5.0

log = logging.getLogger(__name__)


@dataclass
class RunOutcome:
    """What a job produced: its valid results, and whether it succeeded and why."""

    succeeded: bool
    message: str
    results: list[dict[str, Any]] = field(default_factory=list)
    cancelled: bool = False

    @property
    def status(self) -> str:
        if self.cancelled:
            return "cancelled"
        return "succeeded" if self.succeeded else "failed"


@dataclass
class _Callbacks:
    on_progress: Callable[[Progress], None]
    on_result: Callable[[dict[str, Any]], None]
    on_diagnostic: Callable[[str], None]
    on_stdout_junk: Callable[[str], None]
    on_started: Callable[[int], None]
    on_exited: Callable[[int], None]


def _ignore(_: Any) -> None:
    return None


def plan_job(suite: Suite, profile: str, params: object, bin_dir: Path) -> list[list[str]]:
    """Validate everything about a job and return one argv per program; runs nothing."""
    checked = suite.validate(params)
    suite.profile_args(profile)
    argvs = [suite.argv(program, profile, checked, bin_dir) for program in suite.programs]
    for argv in argvs:
        path = Path(argv[0])
        if not path.is_file() or not os.access(path, os.X_OK):
            raise SuiteError(f"program {path.name!r} not found or not executable in {bin_dir}")
    return argvs


def run_job(
    suite: Suite,
    profile: str,
    params: object,
    *,
    bin_dir: Path,
    work_root: Path,
    env: dict[str, Any],
    on_progress: Callable[[Progress], None] = _ignore,
    on_result: Callable[[dict[str, Any]], None] = _ignore,
    on_diagnostic: Callable[[str], None] = _ignore,
    on_stdout_junk: Callable[[str], None] = _ignore,
    on_started: Callable[[int], None] = _ignore,
    on_exited: Callable[[int], None] = _ignore,
    stop: threading.Event | None = None,
    cancel: threading.Event | None = None,
    timeout: float | None = None,
    pin_cpu: int | None = None,
    noisy_threshold: float | None = None,
    extra_params: dict[str, str] | None = None,
) -> RunOutcome:
    """Validate, then run every program of ``suite``; raises SuiteError/ParamError before
    anything runs.  ``env`` (the fingerprint) is added to every result, with a
    ``hygiene`` section when ``noisy_threshold`` is given, and ``extra_params``
    (agent-level factors such as ``write_cache``) to every result's params.
    ``on_result`` sees each result once the job has ended."""
    argvs = plan_job(suite, profile, params, bin_dir)
    work_root.mkdir(parents=True, exist_ok=True)
    job_dir = Path(tempfile.mkdtemp(prefix=f"{suite.name}-", dir=work_root))
    if suite.dir_flag:
        argvs = [[*argv, suite.dir_flag, str(job_dir)] for argv in argvs]
    stop = stop or threading.Event()
    cancel = cancel or threading.Event()
    deadline = None if not timeout else time.monotonic() + timeout
    raw: list[dict[str, Any]] = []
    before = load_snapshot() if noisy_threshold is not None else {}
    outcome: RunOutcome | None = None
    try:
        for index, argv in enumerate(argvs):
            callbacks = _Callbacks(
                on_progress=_scaled(on_progress, index, len(argvs), Path(argv[0]).name),
                on_result=raw.append,
                on_diagnostic=on_diagnostic,
                on_stdout_junk=on_stdout_junk,
                on_started=on_started,
                on_exited=on_exited,
            )
            failure = _run_program(argv, job_dir, callbacks, stop, cancel, deadline, pin_cpu)
            if failure is not None:
                outcome = RunOutcome(False, _cap(failure), cancelled=cancel.is_set())
                break
    finally:
        shutil.rmtree(job_dir, ignore_errors=True)
    final_env = dict(env)
    if noisy_threshold is not None:
        after = load_snapshot()
        final_env["hygiene"] = {
            **final_env.get("hygiene", {}),
            "before": before,
            "after": after,
            "noisy_threshold": noisy_threshold,
            "noisy": is_noisy(before, after, noisy_threshold),
        }
    results = [_finish_result(r, final_env, extra_params or {}) for r in raw]
    for result in results:
        on_result(result)
    if outcome is not None:
        outcome.results = results
        return outcome
    if not results:
        return RunOutcome(False, "the suite's programs exited 0 but printed no results")
    return RunOutcome(True, f"{len(results)} results", results)


def _finish_result(
    result: dict[str, Any], env: dict[str, Any], extra: dict[str, str]
) -> dict[str, Any]:
    params = dict(result.get("params", {}))
    for key, value in extra.items():
        if key in params or len(params) < MAX_PARAMS:
            params[key] = value
        else:
            log.warning("result already has %d params; %s=%s not added", MAX_PARAMS, key, value)
    return with_env({**result, "params": params}, env)


def _run_program(
    argv: list[str],
    job_dir: Path,
    callbacks: _Callbacks,
    stop: threading.Event,
    cancel: threading.Event,
    deadline: float | None,
    pin_cpu: int | None,
) -> str | None:
    """Run one program; the failure message, or ``None`` on success."""
    name = Path(argv[0]).name
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("XACLAB_")}
    child_env["TMPDIR"] = str(job_dir)
    log.info("running %s", argv)
    proc = _start(argv, job_dir, child_env, pin_cpu)
    callbacks.on_started(proc.pid)
    assert proc.stdout is not None and proc.stderr is not None
    bad_lines: list[str] = []
    tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
    readers = [
        threading.Thread(
            target=_read_stdout,
            args=(proc.stdout, callbacks.on_result, callbacks.on_stdout_junk, bad_lines),
            daemon=True,
        ),
        threading.Thread(
            target=_read_stderr,
            args=(proc.stderr, callbacks.on_progress, callbacks.on_diagnostic, tail),
            daemon=True,
        ),
    ]
    for reader in readers:
        reader.start()
    try:
        interrupted = _wait(proc, stop, cancel, deadline)
        for reader in readers:
            reader.join()
    finally:
        callbacks.on_exited(proc.pid)
    code = proc.returncode
    last = " | ".join(list(tail)[-5:])
    if interrupted:
        return f"{name} was stopped: {interrupted}" + (f"; last stderr: {last}" if last else "")
    if code != 0:
        how = f"exited with status {code}"
        if code < 0:
            how = f"was killed by signal {signal.Signals(-code).name}"
        return f"{name} {how}" + (f"; last stderr: {last}" if last else "")
    if bad_lines:
        more = f" (and {len(bad_lines) - 1} more bad lines)" if len(bad_lines) > 1 else ""
        return f"{name} printed an invalid result line on stdout: {bad_lines[0]}{more}"
    return None


def _start(
    argv: list[str], job_dir: Path, child_env: dict[str, str], pin_cpu: int | None
) -> subprocess.Popen[bytes]:
    """Start the program; with ``pin_cpu``, pinned from its first instruction.

    A child inherits the affinity of the thread that forks it, so this thread
    narrows its own affinity around the fork (``sched_setaffinity(0)`` is
    per thread on Linux) and widens it again; no ``preexec_fn`` is needed.
    """
    saved = os.sched_getaffinity(0) if pin_cpu is not None else None
    if pin_cpu is not None:
        os.sched_setaffinity(0, {pin_cpu})
    try:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=job_dir,
            env=child_env,
            shell=False,
            start_new_session=True,
        )
    finally:
        if saved is not None:
            os.sched_setaffinity(0, saved)


def _wait(
    proc: subprocess.Popen[bytes],
    stop: threading.Event,
    cancel: threading.Event,
    deadline: float | None,
) -> str:
    """Wait for the child; stop it (by its PID) on request or timeout.  The reason, or ''."""
    while True:
        try:
            proc.wait(timeout=0.2)
            return ""
        except subprocess.TimeoutExpired:
            pass
        reason = ""
        if cancel.is_set():
            reason = "the job was cancelled"
        elif stop.is_set():
            reason = "the agent is shutting down"
        elif deadline is not None and time.monotonic() > deadline:
            reason = "the job exceeded its time limit"
        if reason:
            _terminate(proc)
            return reason


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the program's process group (its own session), SIGKILL after a grace period."""
    _signal_group(proc, signal.SIGTERM)
    try:
        proc.wait(timeout=TERMINATE_GRACE)
    except subprocess.TimeoutExpired:
        _signal_group(proc, signal.SIGKILL)
        proc.wait()


def _signal_group(proc: subprocess.Popen[bytes], signum: signal.Signals) -> None:
    try:
        os.killpg(proc.pid, signum)
    except ProcessLookupError:
        pass
    except PermissionError:
        proc.send_signal(signum)


def _read_stdout(
    stream: IO[bytes],
    on_result: Callable[[dict[str, Any]], None],
    on_junk: Callable[[str], None],
    bad_lines: list[str],
) -> None:
    number = 0
    while line := stream.readline(MAX_LINE_BYTES + 1):
        number += 1
        if not line.strip():
            continue
        try:
            result = parse_result_line(line)
        except ResultError as exc:
            bad_lines.append(f"line {number}: {exc}")
            on_junk(line[:4096].decode("utf-8", "replace").rstrip("\r\n"))
            continue
        on_result(result)


def _read_stderr(
    stream: IO[bytes],
    on_progress: Callable[[Progress], None],
    on_diagnostic: Callable[[str], None],
    tail: collections.deque[str],
) -> None:
    for raw in stream:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        progress = parse_progress_line(line)
        if progress is not None:
            on_progress(progress)
        else:
            tail.append(line[:500])
            on_diagnostic(line)


def _scaled(
    on_progress: Callable[[Progress], None], index: int, count: int, program: str
) -> Callable[[Progress], None]:
    """Map one program's progress into the job's: program i of n covers [i/n, (i+1)/n]."""

    def report(progress: Progress) -> None:
        if count == 1:
            on_progress(progress)
            return
        fraction = (index + progress.fraction) / count
        on_progress(Progress(fraction, f"{program}: {progress.message}"[:500]))

    return report


def _cap(message: str) -> str:
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 3] + "..."
