"""Run a suite's programs for one job and collect their results.

Each job gets a fresh working directory (its cwd and ``TMPDIR``) under the
configured work dir; the programs are started from an argument vector, never
through a shell, one after another.  stdout is read as result lines, stderr
as progress lines and diagnostics, each on its own thread so neither pipe
can fill up and stall the program.
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

from xaclab_agent.errors import ResultError, SuiteError
from xaclab_agent.progress import Progress, parse_progress_line
from xaclab_agent.results import MAX_LINE_BYTES, parse_result_line, with_env
from xaclab_agent.suites import Suite

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

    @property
    def status(self) -> str:
        return "succeeded" if self.succeeded else "failed"


@dataclass
class _Callbacks:
    on_progress: Callable[[Progress], None]
    on_result: Callable[[dict[str, Any]], None]
    on_diagnostic: Callable[[str], None]


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
    stop: threading.Event | None = None,
    timeout: float | None = None,
) -> RunOutcome:
    """Validate, then run every program of ``suite``; raises SuiteError/ParamError before
    anything runs.  ``env`` (the fingerprint) is added to every result."""
    argvs = plan_job(suite, profile, params, bin_dir)
    work_root.mkdir(parents=True, exist_ok=True)
    job_dir = Path(tempfile.mkdtemp(prefix=f"{suite.name}-", dir=work_root))
    stop = stop or threading.Event()
    deadline = None if not timeout else time.monotonic() + timeout
    results: list[dict[str, Any]] = []

    def keep(result: dict[str, Any]) -> None:
        results.append(result)
        on_result(result)

    try:
        for index, argv in enumerate(argvs):
            callbacks = _Callbacks(
                on_progress=_scaled(on_progress, index, len(argvs), Path(argv[0]).name),
                on_result=keep,
                on_diagnostic=on_diagnostic,
            )
            failure = _run_program(argv, job_dir, env, callbacks, stop, deadline)
            if failure is not None:
                return RunOutcome(False, _cap(failure), results)
    finally:
        shutil.rmtree(job_dir, ignore_errors=True)
    if not results:
        return RunOutcome(False, "the suite's programs exited 0 but printed no results")
    return RunOutcome(True, f"{len(results)} results", results)


def _run_program(
    argv: list[str],
    job_dir: Path,
    fingerprint: dict[str, Any],
    callbacks: _Callbacks,
    stop: threading.Event,
    deadline: float | None,
) -> str | None:
    """Run one program; the failure message, or ``None`` on success."""
    name = Path(argv[0]).name
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("XACLAB_")}
    child_env["TMPDIR"] = str(job_dir)
    log.info("running %s", argv)
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=job_dir,
        env=child_env,
        shell=False,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    bad_lines: list[str] = []
    tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
    readers = [
        threading.Thread(
            target=_read_stdout,
            args=(proc.stdout, name, fingerprint, callbacks.on_result, bad_lines),
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
    interrupted = _wait(proc, stop, deadline)
    for reader in readers:
        reader.join()
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


def _wait(proc: subprocess.Popen[bytes], stop: threading.Event, deadline: float | None) -> str:
    """Wait for the child; stop it (by its PID) on request or timeout.  The reason, or ''."""
    while True:
        try:
            proc.wait(timeout=0.2)
            return ""
        except subprocess.TimeoutExpired:
            pass
        reason = ""
        if stop.is_set():
            reason = "the agent is shutting down"
        elif deadline is not None and time.monotonic() > deadline:
            reason = "the job exceeded its time limit"
        if reason:
            _terminate(proc)
            return reason


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=TERMINATE_GRACE)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _read_stdout(
    stream: IO[bytes],
    program: str,
    fingerprint: dict[str, Any],
    on_result: Callable[[dict[str, Any]], None],
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
            continue
        on_result(with_env(result, fingerprint))


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
