"""Waiting for a child and stopping it, with real processes."""

import subprocess
import sys
from pathlib import Path

import pytest

from xaclab_testsupport import ProcessFailed, free_port, stop_process, wait_until_answers


def spawn(code: str, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen([sys.executable, "-c", code], stdout=out, stderr=subprocess.STDOUT)


def test_a_child_that_exits_fails_the_wait_with_its_log(tmp_path: Path) -> None:
    log = tmp_path / "child.log"
    child = spawn("import sys; print('disk on fire', flush=True); sys.exit(3)", log)
    with pytest.raises(ProcessFailed, match=r"(?s)child exited with code 3.*disk on fire"):
        wait_until_answers(child, f"http://127.0.0.1:{free_port()}/", what="child", log=log)


def test_a_child_that_never_answers_fails_the_wait_and_is_stopped(tmp_path: Path) -> None:
    child = spawn("import time; time.sleep(60)", tmp_path / "child.log")
    try:
        url = f"http://127.0.0.1:{free_port()}/"
        with pytest.raises(ProcessFailed, match="did not answer"):
            wait_until_answers(child, url, what="child", timeout=0.5)
        assert child.poll() is None
    finally:
        stop_process(child)
    assert child.returncode is not None


def test_a_child_that_ignores_sigterm_is_killed(tmp_path: Path) -> None:
    code = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    log = tmp_path / "child.log"
    child = spawn(code, log)
    while "ready" not in log.read_text():
        assert child.poll() is None
    stop_process(child, timeout=0.5)
    assert child.returncode == -9
