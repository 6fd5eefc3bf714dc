from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from xaclab_agent.atomic import atomic_write
from xaclab_agent.client import AgentClient, RetryPolicy
from xaclab_agent.errors import AuthenticationError
from xaclab_agent.spool import Spool

ONCE = RetryPolicy(attempts=1)


def client_for(server: Any, token: str = "xa_test") -> AgentClient:
    return AgentClient("http://agent.test", token, transport=server.transport(), retry=ONCE)


def test_atomic_write_is_private_and_leaves_no_tmp(tmp_path: Path) -> None:
    target = tmp_path / "token"
    atomic_write(target, b"one")
    atomic_write(target, b"two")
    assert target.read_bytes() == b"two"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["token"]


def test_entries_are_whole_json_files_in_order(tmp_path: Path, valid_result: Any) -> None:
    spool = Spool(tmp_path / "spool")
    first = spool.add_results(4, [valid_result])
    second = spool.add_finish(4, "succeeded", "1 results")
    assert spool.pending() == [first, second]
    entry = json.loads(first.read_text())
    assert entry["job_id"] == 4 and entry["results"] == [valid_result]
    assert len(entry["upload_id"]) == 36
    assert not list((tmp_path / "spool").glob("*.tmp"))


def test_names_stay_ordered_across_instances(tmp_path: Path) -> None:
    names = [Spool(tmp_path).add_finish(i, "failed", "x").name for i in range(5)]
    assert names == sorted(names)


def test_503_keeps_the_file_and_a_later_drain_sends_it(
    tmp_path: Path, server: Any, valid_result: Any
) -> None:
    spool = Spool(tmp_path)
    spool.add_results(4, [valid_result])
    spool.add_finish(4, "succeeded", "1 results")
    server.fail_paths["results"] = 503
    with client_for(server) as client:
        report = spool.drain(client, retry=ONCE)
        assert report.remaining == 2 and report.sent == 0 and "503" in report.error
        assert len(spool.pending()) == 2
        assert 4 not in server.finished, "finish must not overtake its results"
        del server.fail_paths["results"]
        report = spool.drain(client, retry=ONCE)
    assert report.sent == 2 and report.remaining == 0
    assert spool.pending() == []
    assert server.results() == [valid_result]
    assert server.finished[4]["status"] == "succeeded"


def test_resend_after_lost_reply_is_a_harmless_duplicate(
    tmp_path: Path, server: Any, valid_result: Any
) -> None:
    spool = Spool(tmp_path)
    path = spool.add_results(4, [valid_result])
    saved = path.read_bytes()
    with client_for(server) as client:
        assert spool.drain(client).sent == 1
        path.write_bytes(saved)  # the reply was "lost": the file came back
        report = spool.drain(client)
    assert report.sent == 1 and report.duplicates == 1
    assert len(server.results()) == 1


def test_permanent_rejection_moves_the_entry_aside(
    tmp_path: Path, server: Any, valid_result: Any
) -> None:
    spool = Spool(tmp_path)
    spool.add_results(4, [valid_result])
    spool.add_finish(4, "failed", "x")
    server.fail_paths["results"] = 422
    with client_for(server) as client:
        report = spool.drain(client)
    assert report.rejected == 1 and report.sent == 1
    rejected = sorted(p.name for p in (tmp_path / "rejected").iterdir())
    assert len(rejected) == 2 and rejected[1].endswith(".reason.txt")


def test_bad_token_keeps_everything(tmp_path: Path, server: Any) -> None:
    spool = Spool(tmp_path)
    spool.add_finish(4, "failed", "x")
    with client_for(server, token="wrong") as client, pytest.raises(AuthenticationError):
        spool.drain(client)
    assert len(spool.pending()) == 1


def test_stale_tmp_files_are_removed_and_never_sent(tmp_path: Path, server: Any) -> None:
    spool = Spool(tmp_path)
    (tmp_path / "00000000000000000001-finish-1-x.json.tmp").write_text("{half")
    with client_for(server) as client:
        assert spool.drain(client).sent == 0
    assert list(tmp_path.iterdir()) == []
    assert server.calls == []


def test_corrupt_entry_is_rejected_not_fatal(tmp_path: Path, server: Any) -> None:
    spool = Spool(tmp_path)
    (tmp_path / "00000000000000000001-finish-1-x.json").write_text("{half")
    with client_for(server) as client:
        assert spool.drain(client).rejected == 1
    assert spool.pending() == []
