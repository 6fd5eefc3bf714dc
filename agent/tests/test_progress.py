from __future__ import annotations

import threading
import time

import pytest

from xaclab_agent.progress import Progress, ProgressReporter, parse_progress_line


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("xaclab-progress 0.4 n=64 write\n", Progress(0.4, "n=64 write")),
        ("xaclab-progress 1 done", Progress(1.0, "done")),
        ("xaclab-progress 0", Progress(0.0, "")),
        ("xaclab-progress   0.5   spaced  out ", Progress(0.5, "spaced  out")),
    ],
)
def test_progress_lines(line: str, expected: Progress) -> None:
    assert parse_progress_line(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "",
        "warning: slow disk",
        "xaclab-progress",
        "xaclab-progress half",
        "xaclab-progress 1.5 x",
        "xaclab-progress -0.1 x",
        "xaclab-progress nan x",
        "xaclab-progressive 0.5 x",
        " xaclab-progress",
    ],
)
def test_other_lines_are_diagnostics(line: str) -> None:
    assert parse_progress_line(line) is None


def test_message_is_capped() -> None:
    parsed = parse_progress_line("xaclab-progress 0.5 " + "m" * 900)
    assert parsed is not None and len(parsed.message) == 500


def test_reporter_rate_limits_and_keeps_the_latest() -> None:
    sent: list[Progress] = []
    arrived = threading.Event()

    def send(progress: Progress) -> None:
        sent.append(progress)
        arrived.set()

    reporter = ProgressReporter(send, interval=0.3)
    for i in range(50):
        reporter.report(Progress(i / 50, f"step {i}"))
    reporter.report(Progress(1.0, "last"))
    deadline = time.monotonic() + 5
    while (not sent or sent[-1].message != "last") and time.monotonic() < deadline:
        time.sleep(0.02)
    reporter.close()
    assert sent[-1] == Progress(1.0, "last")
    assert len(sent) <= 3


def test_reporter_survives_send_errors() -> None:
    calls: list[Progress] = []

    def send(progress: Progress) -> None:
        calls.append(progress)
        raise RuntimeError("server down")

    reporter = ProgressReporter(send, interval=0)
    reporter.report(Progress(0.1, "a"))
    deadline = time.monotonic() + 5
    while not calls and time.monotonic() < deadline:
        time.sleep(0.01)
    reporter.report(Progress(0.2, "b"))
    while len(calls) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    reporter.close()
    assert [c.message for c in calls] == ["a", "b"]
