"""Child processes that the tests start: each writes to a log file, is waited for
over HTTP, and is stopped by its own PID (never by name).

:class:`ProcessFailed` is the one error: a child exited or did not answer in
time, or a command failed; its message ends with what the child wrote.
"""

import os
import ssl
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import httpx

from xaclab_testsupport.lifecycle import Lifecycle

LOG_TAIL_CHARS = 4000


class ProcessFailed(RuntimeError):
    """A child process exited, did not answer in time, or a command returned non-zero."""


def log_tail(path: Path, chars: int = LOG_TAIL_CHARS) -> str:
    """The end of a child's log ("" when it wrote nothing yet)."""
    if not path.exists():
        return ""
    return path.read_text(errors="replace")[-chars:]


def failure(message: str, log: Path | None) -> ProcessFailed:
    if log is None:
        return ProcessFailed(message)
    return ProcessFailed(f"{message}; the end of {log}:\n{log_tail(log)}")


def environment(*, inherit_xaclab: bool) -> dict[str, str]:
    """This process's environment for a child; without the caller's ``XACLAB_*``
    settings unless asked, so a developer's shell cannot change what a test sees."""
    if inherit_xaclab:
        return dict(os.environ)
    return {k: v for k, v in os.environ.items() if not k.startswith("XACLAB_")}


def wait_until_answers(
    process: subprocess.Popen[bytes],
    url: str,
    *,
    what: str,
    log: Path | None = None,
    timeout: float = 60,
    verify: ssl.SSLContext | bool = True,
) -> None:
    """Poll ``url`` until it answers 200; raise :class:`ProcessFailed` (with the
    log's tail) when the process exits first or ``timeout`` seconds pass.
    ``verify``: the trust for an https:// URL (a context with the test's CA)."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise failure(f"{what} exited with code {process.returncode}", log)
        try:
            if httpx.get(url, timeout=2, verify=verify).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise failure(f"{what} did not answer {url} within {timeout:g} s", log)
        time.sleep(0.2)


def stop_process(process: subprocess.Popen[bytes], timeout: float = 15) -> None:
    """SIGTERM to this PID, SIGKILL if it is still there after ``timeout`` seconds."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class ChildProcess(Lifecycle):
    """A long-running child whose stdout and stderr go to ``log_path`` (appended)."""

    def __init__(self, log_path: Path) -> None:
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None

    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path) -> subprocess.Popen[bytes]:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                list(argv), env=dict(env), cwd=cwd, stdout=log, stderr=subprocess.STDOUT
            )
        return self.process

    @property
    def pid(self) -> int:
        if self.process is None:
            raise ProcessFailed("the process was never started")
        return self.process.pid

    def poll(self) -> int | None:
        """The exit code, or None while it runs (or was never started)."""
        return None if self.process is None else self.process.poll()

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)


def run_command(
    argv: Sequence[str], *, env: Mapping[str, str], cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run a command to its end with its output captured; the caller judges the result."""
    return subprocess.run(
        list(argv), env=dict(env), cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def checked(done: subprocess.CompletedProcess[str], what: str) -> str:
    """The command's stdout, stripped; :class:`ProcessFailed` with its stderr if it failed."""
    if done.returncode != 0:
        raise ProcessFailed(f"{what} failed with code {done.returncode}: {done.stderr.strip()}")
    return done.stdout.strip()
