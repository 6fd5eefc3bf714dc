"""Agent-level factors and the log streamer: bad input is refused before anything runs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from xaclab_agent.errors import ParamError, UnavailableError
from xaclab_agent.factors import split_factors
from xaclab_agent.hygiene import is_noisy, load_snapshot
from xaclab_agent.joblog import LogStreamer


def split(params: Any, tmp_path: Path) -> Any:
    allowed = tmp_path / "allowed"
    allowed.mkdir(exist_ok=True)
    return split_factors(params, allowed_dirs=(allowed,), default_dir=tmp_path / "work")


def test_factors_are_stripped_and_typed(tmp_path: Path) -> None:
    cpu = min(os.sched_getaffinity(0))
    factors, rest = split(
        {
            "repetitions": 2,
            "write_cache": "off",
            "pin_cpu": cpu,
            "drop_caches": True,
            "timeout": 30,
            "target_dir": str(tmp_path / "allowed"),
        },
        tmp_path,
    )
    assert rest == {"repetitions": 2}
    assert factors.write_cache == "off" and factors.pin_cpu == cpu and factors.drop_caches
    assert factors.timeout == 30.0 and factors.target_dir == (tmp_path / "allowed").resolve()


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"write_cache": "maybe"}, "write_cache"),
        ({"write_cache": True}, "write_cache"),
        ({"pin_cpu": 100000}, "pin_cpu"),
        ({"pin_cpu": True}, "pin_cpu"),
        ({"drop_caches": "yes"}, "drop_caches"),
        ({"timeout": 0}, "timeout"),
        ({"target_dir": "/etc"}, "outside the agent's allowed_dirs"),
        ({"target_dir": "relative/dir"}, "absolute path"),
        ({"target_dir": "/tmp/x; rm -rf /"}, "absolute path"),
        ({"target_dir": "/tmp/$(reboot)"}, "absolute path"),
        ({"target_dir": "ALLOWED/../.."}, "'..'"),
        ({"target_dir": "ALLOWED/missing"}, "not an existing directory"),
    ],
)
def test_bad_factors_are_refused(tmp_path: Path, params: dict[str, Any], reason: str) -> None:
    params = {
        k: v.replace("ALLOWED", str(tmp_path / "allowed")) if isinstance(v, str) else v
        for k, v in params.items()
    }
    with pytest.raises(ParamError, match=reason.replace("(", r"\(").replace("$", r"\$")):
        split(params, tmp_path)


def test_symlink_out_of_the_allow_list_is_refused(tmp_path: Path) -> None:
    (tmp_path / "allowed").mkdir()
    (tmp_path / "allowed" / "escape").symlink_to("/etc")
    with pytest.raises(ParamError, match="outside"):
        split({"target_dir": str(tmp_path / "allowed" / "escape")}, tmp_path)


def test_log_streamer_sequences_caps_and_spools() -> None:
    sent: list[tuple[int, str, str]] = []
    spooled: list[tuple[int, str, str]] = []
    down = {"on": False}

    def send(seq: int, stream: str, text: str) -> None:
        if down["on"]:
            raise UnavailableError("down")
        sent.append((seq, stream, text))

    streamer = LogStreamer(
        send, lambda *a: spooled.append(a), interval=60, chunk_bytes=100, cap_bytes=300
    )
    for i in range(10):
        streamer.write("stderr", f"line {i:02d} " + "x" * 40)
    down["on"] = True
    streamer.write("stdout", "junk")
    streamer.close()
    chunks = sent + spooled
    seqs = [c[0] for c in chunks]
    assert seqs == sorted(seqs) and seqs == list(range(1, len(seqs) + 1))
    text = "".join(c[2] for c in chunks)
    assert "line 00" in text and "line 09" not in text, "capped at 300 bytes"
    assert chunks[-1][1] == "agent" and "not sent" in chunks[-1][2]
    assert spooled, "chunks the server could not take were spooled"


def test_load_snapshot_and_noise() -> None:
    snap = load_snapshot()
    assert "loadavg_1m" in snap and "procs_running" in snap
    quiet = {"loadavg_1m": 0.1, "procs_running": 1}
    busy = {"loadavg_1m": 0.1, "procs_running": 4}
    assert not is_noisy(quiet, quiet, 1.0)
    assert is_noisy(quiet, busy, 1.0)
