"""Write-cache control: the protocol with fake backends, then for real on a loop device."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path
from typing import Any

import pytest

from xaclab_agent.blockdev import Disk
from xaclab_agent.client import AgentClient, RetryPolicy
from xaclab_agent.config import Config
from xaclab_agent.daemon import Daemon
from xaclab_agent.writecache import (
    JOURNAL_NAME,
    KernelBackend,
    WriteCacheControl,
    WriteCacheError,
)


class FakeBackend:
    name = "kernel"
    changes_device = False

    def __init__(self, state: bool = True, stuck: bool = False, log: list[str] | None = None):
        self.state = state
        self.stuck = stuck
        self.log = log if log is not None else []

    def unavailable(self, disk: str) -> str:
        return ""

    def get(self, disk: str) -> bool:
        return self.state

    def set(self, disk: str, on: bool) -> None:
        self.log.append(f"set {disk} {on}")
        if not self.stuck:
            self.state = on


def test_refuses_without_root(tmp_path: Path) -> None:
    control = WriteCacheControl(tmp_path, is_root=lambda: False)
    with pytest.raises(WriteCacheError, match="needs root"):
        control.apply(tmp_path, "off")
    assert not control.pending()


def test_refuses_a_directory_without_a_block_device(tmp_path: Path) -> None:
    control = WriteCacheControl(tmp_path, is_root=lambda: True)
    with pytest.raises(WriteCacheError, match="not on a local block device"):
        control.apply(Path("/dev/shm"), "off")


def test_refuses_unknown_choice(tmp_path: Path) -> None:
    with pytest.raises(WriteCacheError, match="one of"):
        WriteCacheControl(tmp_path).apply(tmp_path, "maybe")


def test_unchanged_only_reads(tmp_path: Path) -> None:
    change = WriteCacheControl(tmp_path, is_root=lambda: False).apply(tmp_path, "unchanged")
    assert change.disks == [] and change.env["requested"] == "unchanged"
    assert change.state in ("on", "off", "unknown", "mixed")


def _control(tmp_path: Path, backend: Any) -> WriteCacheControl:
    # Whatever disk the tmp dir is on, the fake backend stands in for it.
    return WriteCacheControl(
        tmp_path / "state",
        is_root=lambda: True,
        backend_for=lambda disk, mode: backend,
        describe=lambda name: Disk(name=name, kind="other", model="m"),
    )


def test_journal_is_written_before_the_change(tmp_path: Path, monkeypatch: Any) -> None:
    from xaclab_agent import writecache

    backend = FakeBackend(state=True)
    control = _control(tmp_path, backend)
    seen: list[Any] = []
    original_set = backend.set

    def spy(disk: str, on: bool) -> None:
        seen.append(json.loads(control.journal.read_text()))
        original_set(disk, on)

    monkeypatch.setattr(backend, "set", spy)
    monkeypatch.setattr(writecache, "backend_by_name", lambda name: backend)
    monkeypatch.setattr(writecache, "disk_identity", lambda disk: "id")
    change = control.apply(tmp_path, "off")
    assert seen and seen[0]["disks"][0]["original"] == "on"
    assert change.state == "off" and backend.state is False
    assert control.restore(change) == ""
    assert backend.state is True and not control.pending()


def test_a_change_that_does_not_read_back_is_undone(tmp_path: Path, monkeypatch: Any) -> None:
    from xaclab_agent import writecache

    backend = FakeBackend(state=True, stuck=True)
    monkeypatch.setattr(writecache, "backend_by_name", lambda name: backend)
    monkeypatch.setattr(writecache, "disk_identity", lambda disk: "id")
    control = _control(tmp_path, backend)
    with pytest.raises(WriteCacheError, match="reads back on"):
        control.apply(tmp_path, "off")
    assert not control.pending(), "restored (it never changed), so the journal is gone"


def test_unreadable_journal_is_set_aside(tmp_path: Path) -> None:
    (tmp_path / JOURNAL_NAME).write_text("{not json")
    control = WriteCacheControl(tmp_path)
    assert "unreadable" in control.replay()
    assert not control.pending()
    assert list(tmp_path.glob("write-cache-journal.unapplied-*.json"))


# --- for real, on a loop device -------------------------------------------------------


def test_loop_device_off_then_restored(tmp_path: Path, loop_device: Any) -> None:
    with loop_device(tmp_path) as loop:
        control = WriteCacheControl(tmp_path / "state")
        change = control.apply(loop.mount_point, "off", job_id=1)
        assert loop.write_cache() == "write through"
        journal = json.loads(control.journal.read_text())
        assert journal["disks"] == [
            {
                "name": loop.device,
                "backend": "kernel",
                "original": "on",
                "identity": f"loop:{tmp_path / 'disk.img'}",
            }
        ]
        assert change.env["disks"][loop.device]["changes_device"] is False
        assert control.restore(change) == ""
        assert loop.write_cache() == "write back"
        assert not control.pending()


def test_replay_restores_after_a_crash(tmp_path: Path, loop_device: Any) -> None:
    with loop_device(tmp_path) as loop:
        control = WriteCacheControl(tmp_path / "state")
        control.apply(loop.mount_point, "off")  # then the agent "dies": no restore
        assert loop.write_cache() == "write through"
        with pytest.raises(WriteCacheError, match="not restored yet"):
            control.apply(loop.mount_point, "off")
        assert WriteCacheControl(tmp_path / "state").replay() == ""
        assert loop.write_cache() == "write back" and not control.pending()


def _daemon(lab: Any, server: Any, tmp_path: Path, mount: Path) -> Daemon:
    config = Config(
        state_dir=tmp_path / "state",
        bin_dir=lab.bin_dir,
        work_dir=lab.work_dir,
        suites_dir=lab.suites_dir,
        claim_wait=0,
        progress_interval=0,
        heartbeat_interval=0.2,
        allowed_dirs=(mount,),
    )
    client = AgentClient(
        "http://agent.test", server.token, transport=server.transport(), retry=RetryPolicy(1)
    )
    return Daemon(config, client, fingerprint={"fingerprint_hash": "h"}, rng=random.Random(0))


def _job(mount: Path, **params: Any) -> dict[str, Any]:
    return {
        "job_id": 17,
        "run_id": 9,
        "suite": "fake",
        "profile": "quick",
        "params": {"target_dir": str(mount), "write_cache": "off", **params},
    }


def test_job_runs_with_write_cache_off_and_restores(
    lab: Any, server: Any, tmp_path: Path, loop_device: Any
) -> None:
    with loop_device(tmp_path) as loop:
        lab.watch_write_cache(loop.write_cache_path)
        server.jobs.append(_job(loop.mount_point))
        assert _daemon(lab, server, tmp_path, loop.mount_point).run(once=True) == 0
        assert server.finished[17]["status"] == "succeeded", server.finished
        results = server.results()
        assert len(results) == 2
        for result in results:
            assert result["params"]["wc_seen"] == "write through", "the program ran with it off"
            assert result["params"]["write_cache"] == "off"
            assert result["env"]["write_cache"]["state"] == "off"
            assert result["env"]["storage"]["stack"] == [loop.device]
            assert result["params"]["cwd"].startswith(str(loop.mount_point))
        assert loop.write_cache() == "write back"
        assert not (tmp_path / "state" / JOURNAL_NAME).exists()


def test_cancel_stops_the_program_and_restores(
    lab: Any, server: Any, tmp_path: Path, loop_device: Any
) -> None:
    lab.set_mode("sleep")
    with loop_device(tmp_path) as loop:
        server.jobs.append(_job(loop.mount_point))
        daemon = _daemon(lab, server, tmp_path, loop.mount_point)
        threading.Timer(1.0, lambda: server.cancelled.add(17)).start()
        assert daemon.run(once=True) == 0
        assert server.finished[17]["status"] == "cancelled"
        assert "cancelled on the server" in server.finished[17]["message"]
        assert loop.write_cache() == "write back"


def test_failing_program_still_restores(
    lab: Any, server: Any, tmp_path: Path, loop_device: Any
) -> None:
    lab.set_mode("fail")
    with loop_device(tmp_path) as loop:
        server.jobs.append(_job(loop.mount_point))
        assert _daemon(lab, server, tmp_path, loop.mount_point).run(once=True) == 0
        assert server.finished[17]["status"] == "failed"
        assert loop.write_cache() == "write back"


def test_target_outside_allowed_dirs_is_refused(
    lab: Any, server: Any, tmp_path: Path, loop_device: Any
) -> None:
    with loop_device(tmp_path) as loop:
        server.jobs.append(_job(Path("/etc")))
        assert _daemon(lab, server, tmp_path, loop.mount_point).run(once=True) == 0
        assert "outside the agent's allowed_dirs" in server.finished[17]["message"]
        assert lab.runs() == [] and loop.write_cache() == "write back"


def test_kernel_backend_reads_the_root_disk() -> None:
    disks = [p.name for p in Path("/sys/block").iterdir() if (p / "queue/write_cache").exists()]
    assert disks, "no block device exposes queue/write_cache; the kernel backend cannot be checked"
    assert KernelBackend().get(disks[0]) in (True, False)
