"""The hdparm, sdparm and nvme-cli backends against the tools' recorded outputs.

replay_tool.py stands in for each tool on PATH and replays what the real one
prints (recorded/write-cache-tools.json): the cache on, off, unsupported,
permission denied, and the device gone mid-run.  The agent's own code runs
unchanged: the backend picked for the disk's kind, ``run_tool`` starting the
program, the journal, the restore and the replay after a crash, which is a
real SIGKILL of a process that changed the cache.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from xaclab_agent.blockdev import Disk, Storage
from xaclab_agent.writecache import (
    JOURNAL_NAME,
    WriteCacheControl,
    WriteCacheError,
    pick_backend,
)

HERE = Path(__file__).resolve().parent
RECORDED = json.loads((HERE / "recorded" / "write-cache-tools.json").read_text())
# Disk kind -> (tool, device name, the backend pick_backend gives it).
KINDS = {
    "ata": ("hdparm", "sda", "ata"),
    "scsi": ("sdparm", "sdb", "scsi"),
    "nvme": ("nvme", "nvme0n1", "nvme"),
}


@dataclass
class Device:
    """A simulated disk the stand-in tool answers for."""

    kind: str
    name: str
    state_file: Path
    serial: str = "S4EWNX0R123456"

    def set(self, **values: Any) -> None:
        current = json.loads(self.state_file.read_text())
        current.update(values)
        self.state_file.write_text(json.dumps(current))

    def read(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.state_file.read_text())
        return loaded

    def disk(self) -> Disk:
        return Disk(
            name=self.name,
            kind=self.kind,
            model="Samsung SSD 870 EVO 1TB" if self.kind == "ata" else "test disk",
            serial=self.serial,
            size_bytes=1000204886016,
        )

    def control(self, state_dir: Path) -> WriteCacheControl:
        """The agent's control, seeing this disk under any directory."""
        return WriteCacheControl(
            state_dir,
            is_root=lambda: True,
            describe=lambda name: self.disk(),
            storage=lambda directory: Storage(str(directory), None, [self.name], [self.disk()]),
        )


def _install(bin_dir: Path) -> None:
    bin_dir.mkdir()
    for tool in ("hdparm", "sdparm", "nvme"):
        wrapper = bin_dir / tool
        wrapper.write_text(
            f'#!/bin/sh\nexec "{sys.executable}" "{HERE / "replay_tool.py"}" {tool} "$@"\n'
        )
        wrapper.chmod(0o755)


@pytest.fixture(params=sorted(KINDS))
def device(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Device]:
    kind = str(request.param)
    _tool, name, _backend = KINDS[kind]
    _install(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    state = tmp_path / "device.json"
    state.write_text(json.dumps({"state": "on", "mode": "ok"}))
    monkeypatch.setenv("STANDIN_STATE", str(state))
    yield Device(kind, name, state)


def test_the_recorded_outputs_parse_as_on_and_off(device: Device) -> None:
    backend = pick_backend(device.disk())
    assert backend.name == KINDS[device.kind][2] and backend.changes_device
    assert backend.unavailable(device.name) == ""
    assert backend.get(device.name) is True
    device.set(state="off")
    assert backend.get(device.name) is False
    backend.set(device.name, True)
    assert device.read()["state"] == "on" and backend.get(device.name) is True
    tool = KINDS[device.kind][0]
    assert [c[0] for c in device.read()["calls"]] == [tool] * 4


def test_off_then_restored_records_a_device_change(device: Device, tmp_path: Path) -> None:
    control = device.control(tmp_path / "state")
    change = control.apply(tmp_path, "off", job_id=7)
    assert device.read()["state"] == "off"
    journal = json.loads(control.journal.read_text())
    assert journal["disks"][0]["backend"] == KINDS[device.kind][2]
    assert journal["disks"][0]["original"] == "on"
    disk_env = change.env["disks"][device.name]
    assert disk_env["changes_device"] is True and disk_env["device_changed"] is True
    assert change.env["device_changed"] is True and change.state == "off"
    assert control.restore(change) == ""
    assert device.read()["state"] == "on" and not control.pending()


@pytest.mark.parametrize("mode", ["unsupported", "denied", "gone"])
def test_a_disk_that_cannot_report_is_refused_before_anything_changes(
    device: Device, tmp_path: Path, mode: str
) -> None:
    device.set(mode=mode)
    control = device.control(tmp_path / "state")
    with pytest.raises(WriteCacheError) as refused:
        control.apply(tmp_path, "off")
    message = str(refused.value)
    assert message.startswith(f"{device.name} does not report its write cache")
    expected = {
        "unsupported": {
            "ata": "gave no write-caching value",
            "scsi": "WCE not found in Caching (SBC) mode page",
            "nvme": "NVMe status: Invalid Field in Command",
        },
        "denied": dict.fromkeys(KINDS, "Permission denied"),
        "gone": dict.fromkeys(KINDS, "No such file or directory"),
    }[mode][device.kind]
    assert expected in message
    assert "Usage" not in message, "the tool's first line, not its usage text"
    assert not control.pending() and device.read()["state"] == "on"
    assert all(
        "-W0" not in c and "--clear" not in c and "-v" not in c for c in device.read()["calls"]
    )


def test_a_disk_without_an_identity_is_refused(device: Device, tmp_path: Path) -> None:
    """What the tools answered for a loop device on the development machine."""
    if device.kind == "nvme":
        device.set(mode="denied-no-capability")
        why = "Operation not permitted"
    else:
        device.set(mode="no-identity")
        why = (
            "gave no write-caching value" if device.kind == "ata" else "SCSI INQUIRY command failed"
        )
    with pytest.raises(WriteCacheError, match=why):
        device.control(tmp_path / "state").apply(tmp_path, "off")


def test_a_device_gone_mid_run_keeps_the_journal_until_it_is_back(
    device: Device, tmp_path: Path
) -> None:
    control = device.control(tmp_path / "state")
    change = control.apply(tmp_path, "off")
    device.set(mode="gone")
    problem = control.restore(change)
    assert problem.startswith("write cache NOT restored: ")
    assert "No such file or directory" in problem and str(control.journal) in problem
    assert control.pending(), "the journal stays until the disk is back on"
    device.set(mode="ok")
    assert device.control(tmp_path / "state").replay() == ""
    assert device.read()["state"] == "on" and not control.pending()


def test_a_device_that_vanishes_between_two_calls_fails_the_change_and_is_not_guessed(
    device: Device, tmp_path: Path
) -> None:
    """get works, then the disk goes before set: the change fails, the journal stays."""
    device.set(gone_after=1)
    control = device.control(tmp_path / "state")
    with pytest.raises(WriteCacheError, match="No such file or directory"):
        control.apply(tmp_path, "off")
    assert control.pending() and device.read()["state"] == "on"


def test_a_replaced_disk_is_not_touched_and_the_journal_is_set_aside(
    device: Device, tmp_path: Path
) -> None:
    control = device.control(tmp_path / "state")
    control.apply(tmp_path, "off")
    device.serial = "ANOTHER-DISK"
    device.set(state="on")  # the new disk, with its own setting
    calls = len(device.read()["calls"])
    problem = device.control(tmp_path / "state").replay()
    assert "is no longer the disk that was changed" in problem
    assert "moved to" in problem and not control.pending()
    assert list((tmp_path / "state").glob("write-cache-journal.unapplied-*.json"))
    assert len(device.read()["calls"]) == calls, "nothing was sent to the new disk"


CRASH = """
import os, signal, sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_writecache_backends import Device
device = Device({kind!r}, {name!r}, Path({state!r}))
device.control(Path({state_dir!r})).apply(Path({state_dir!r}), "off", job_id=9)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_restore_after_the_agent_is_killed(device: Device, tmp_path: Path) -> None:
    """A process changes the cache and is SIGKILLed; the next start replays the journal."""
    script = CRASH.format(
        tests=str(HERE),
        kind=device.kind,
        name=device.name,
        state=str(device.state_file),
        state_dir=str(tmp_path / "state"),
    )
    done = subprocess.run([sys.executable, "-c", script], env=os.environ.copy(), timeout=60)
    assert done.returncode == -signal.SIGKILL
    assert device.read()["state"] == "off"
    assert (tmp_path / "state" / JOURNAL_NAME).exists()
    control = device.control(tmp_path / "state")
    with pytest.raises(WriteCacheError, match="not restored yet"):
        control.apply(tmp_path, "off")
    assert control.replay() == ""
    assert device.read()["state"] == "on" and not control.pending()


def test_every_recorded_case_names_its_source() -> None:
    for tool in ("hdparm", "sdparm", "nvme"):
        cases = RECORDED[tool]
        assert cases["source"].startswith(tool if tool != "nvme" else "nvme-cli")
        for name in ("get-on", "get-off", "set-on", "set-off", "get-unsupported", "denied", "gone"):
            assert name in cases, (tool, name)
        assert any("recorded" in c for c in cases.values() if isinstance(c, dict))
