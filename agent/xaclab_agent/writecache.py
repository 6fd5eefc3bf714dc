"""Write-cache control for the disks under a directory, with a restore journal.

Backends, picked per disk (docs/write-cache.md):

=======  ==============================================  ==================
name     how                                              changes
=======  ==============================================  ==================
ata      ``hdparm -W`` / ``-W0`` / ``-W1``                the drive
scsi     ``sdparm --get/--set/--clear WCE`` (current      the drive
         page only), else sysfs ``cache_type``
nvme     ``nvme get-feature/set-feature -f 6``            the controller
kernel   ``/sys/block/X/queue/write_cache``               **only the kernel**
=======  ==============================================  ==================

The kernel view ("write back" / "write through") decides whether the kernel
sends cache flushes (FUA / FLUSH) to the device; writing it does not change
the device's own cache.  Loop, virtio and other virtual disks only have this
view.

Every change follows one protocol: read the original state of every disk,
write it to the journal (atomic write, fsync, rename), change, read back and
compare.  Restoring sets the originals, reads them back, and only then
deletes the journal.  A journal found at start-up means the agent died
between the two: :meth:`WriteCacheControl.replay` restores from it.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from xaclab_agent.atomic import atomic_write, fsync_dir
from xaclab_agent.blockdev import SYS_BLOCK, Disk, Storage, describe_disk, read_text, storage_for
from xaclab_agent.errors import AgentError

JOURNAL_NAME = "write-cache-journal.json"
JOURNAL_FORMAT = "xaclab-write-cache-journal"
TOOL_TIMEOUT = 30.0
CHOICES = ("on", "off", "unchanged")
BACKENDS = ("auto", "kernel")

log = logging.getLogger(__name__)


class WriteCacheError(AgentError):
    """A write-cache change was refused, failed, or could not be verified or restored."""


def _on(value: bool) -> str:
    return "on" if value else "off"


class Backend(Protocol):
    name: str
    changes_device: bool

    def unavailable(self, disk: str) -> str:
        """Why this backend cannot control ``disk``, or '' when it can."""
        ...

    def get(self, disk: str) -> bool: ...

    def set(self, disk: str, on: bool) -> None: ...


Runner = Callable[[list[str]], str]


def run_tool(argv: list[str]) -> str:
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise WriteCacheError(f"{argv[0]} could not run: {exc}") from exc
    if done.returncode != 0:
        # The first line says what went wrong; nvme-cli follows it with its usage text.
        detail = [line.strip() for line in (done.stderr or done.stdout).splitlines()]
        detail = [line for line in detail if line]
        raise WriteCacheError(
            f"{' '.join(argv)} exited {done.returncode}: {detail[0] if detail else 'no output'}"
        )
    return done.stdout


class KernelBackend:
    """``/sys/block/X/queue/write_cache``: the kernel's view only."""

    name = "kernel"
    changes_device = False

    def __init__(self, sys_block: Path = SYS_BLOCK) -> None:
        self.sys_block = sys_block

    def _path(self, disk: str) -> Path:
        return self.sys_block / disk / "queue" / "write_cache"

    def unavailable(self, disk: str) -> str:
        if not self._path(disk).exists():
            return f"{disk} has no {self._path(disk)} (kernel older than 4.7?)"
        return ""

    def get(self, disk: str) -> bool:
        text = read_text(self._path(disk))
        if text not in ("write back", "write through"):
            raise WriteCacheError(f"{self._path(disk)} reads {text!r}")
        return text == "write back"

    def set(self, disk: str, on: bool) -> None:
        try:
            self._path(disk).write_text("write back" if on else "write through")
        except OSError as exc:
            raise WriteCacheError(f"cannot write {self._path(disk)}: {exc}") from exc


class AtaBackend:
    name = "ata"
    changes_device = True
    PATTERN = re.compile(r"write-caching\s*=\s*(\d)")

    def __init__(self, run: Runner = run_tool) -> None:
        self.run = run

    def unavailable(self, disk: str) -> str:
        return "" if shutil.which("hdparm") else "hdparm is not installed"

    def get(self, disk: str) -> bool:
        out = self.run(["hdparm", "-W", f"/dev/{disk}"])
        match = self.PATTERN.search(out)
        if match is None:
            raise WriteCacheError(f"hdparm -W /dev/{disk} gave no write-caching value")
        return match.group(1) == "1"

    def set(self, disk: str, on: bool) -> None:
        self.run(["hdparm", f"-W{1 if on else 0}", f"/dev/{disk}"])


class ScsiBackend:
    """sdparm on the current mode page (not ``--save``); else sysfs ``cache_type``.

    Writing ``cache_type`` without the ``temporary `` prefix makes the kernel
    send MODE SELECT to the device; with the prefix only the kernel's view
    changes, which is not what this backend is for.
    """

    name = "scsi"
    changes_device = True
    PATTERN = re.compile(r"^\s*WCE\s+(\d)", re.MULTILINE)

    def __init__(self, run: Runner = run_tool, sys_block: Path = SYS_BLOCK) -> None:
        self.run = run
        self.sys_block = sys_block

    def _cache_type(self, disk: str) -> Path | None:
        found = sorted((self.sys_block / disk / "device" / "scsi_disk").glob("*/cache_type"))
        return found[0] if found else None

    def unavailable(self, disk: str) -> str:
        if shutil.which("sdparm") or self._cache_type(disk):
            return ""
        return "sdparm is not installed and the disk has no scsi_disk cache_type"

    def get(self, disk: str) -> bool:
        if shutil.which("sdparm"):
            match = self.PATTERN.search(self.run(["sdparm", "--get", "WCE", f"/dev/{disk}"]))
            if match is None:
                raise WriteCacheError(f"sdparm --get WCE /dev/{disk} gave no WCE value")
            return match.group(1) == "1"
        path = self._cache_type(disk)
        assert path is not None
        return read_text(path).startswith("write back")

    def set(self, disk: str, on: bool) -> None:
        if shutil.which("sdparm"):
            self.run(["sdparm", "--set" if on else "--clear", "WCE", f"/dev/{disk}"])
            return
        path = self._cache_type(disk)
        assert path is not None
        try:
            path.write_text("write back" if on else "write through")
        except OSError as exc:
            raise WriteCacheError(f"cannot write {path}: {exc}") from exc


class NvmeBackend:
    """Feature 6, Volatile Write Cache.  Controllers without one refuse get-feature."""

    name = "nvme"
    changes_device = True
    PATTERN = re.compile(r"[Cc]urrent value\s*:\s*(0x[0-9a-fA-F]+|\d+)")

    def __init__(self, run: Runner = run_tool) -> None:
        self.run = run

    def unavailable(self, disk: str) -> str:
        return "" if shutil.which("nvme") else "nvme-cli is not installed"

    def get(self, disk: str) -> bool:
        out = self.run(["nvme", "get-feature", f"/dev/{disk}", "-f", "6"])
        match = self.PATTERN.search(out)
        if match is None:
            raise WriteCacheError(f"nvme get-feature -f 6 /dev/{disk} gave no current value")
        return int(match.group(1), 0) & 1 == 1

    def set(self, disk: str, on: bool) -> None:
        self.run(["nvme", "set-feature", f"/dev/{disk}", "-f", "6", "-v", "1" if on else "0"])


def pick_backend(disk: Disk, mode: str = "auto") -> Backend:
    if mode == "kernel":
        return KernelBackend()
    if disk.kind == "nvme":
        return NvmeBackend()
    if disk.kind == "ata":
        return AtaBackend()
    if disk.kind == "scsi":
        return ScsiBackend()
    return KernelBackend()


def backend_by_name(name: str) -> Backend:
    backends: dict[str, Callable[[], Backend]] = {
        "kernel": KernelBackend,
        "ata": AtaBackend,
        "scsi": ScsiBackend,
        "nvme": NvmeBackend,
    }
    if name not in backends:
        raise WriteCacheError(f"unknown write-cache backend {name!r} in the journal")
    return backends[name]()


def disk_identity(disk: Disk) -> str:
    """What must still match before a journal entry is applied to a disk of this name."""
    if disk.kind == "loop":
        return f"loop:{disk.backing_file}"
    return f"{disk.kind}:{disk.model}:{disk.serial}:{disk.size_bytes}"


def device_state(disk: Disk) -> dict[str, Any]:
    """The write-cache state as the device tools report it, where they answer (best effort)."""
    backend = pick_backend(disk)
    if backend.name == "kernel" or backend.unavailable(disk.name):
        return {}
    try:
        return {"write_cache_device": _on(backend.get(disk.name)), "device_tool": backend.name}
    except WriteCacheError as exc:
        return {"write_cache_device": "unknown", "device_tool_error": str(exc)[:200]}


@dataclass
class DiskChange:
    name: str
    backend: str
    original: bool
    identity: str


@dataclass
class Change:
    """What :meth:`WriteCacheControl.apply` did, and the env section describing it."""

    requested: str
    disks: list[DiskChange] = field(default_factory=list)
    env: dict[str, Any] = field(default_factory=dict)

    @property
    def state(self) -> str:
        value = self.env.get("state")
        return value if isinstance(value, str) else "unknown"


class WriteCacheControl:
    def __init__(
        self,
        state_dir: Path,
        *,
        mode: str = "auto",
        is_root: Callable[[], bool] = lambda: os.geteuid() == 0,
        backend_for: Callable[[Disk, str], Backend] = pick_backend,
        describe: Callable[[str], Disk] = describe_disk,
        storage: Callable[[Path], Storage] = storage_for,
    ) -> None:
        self.journal = state_dir / JOURNAL_NAME
        self.mode = mode
        self._is_root = is_root
        self._backend_for = backend_for
        self._describe = describe
        self._storage = storage

    def pending(self) -> bool:
        return self.journal.exists()

    def apply(self, directory: Path, want: str, *, job_id: int | None = None) -> Change:
        """Set the write cache of every disk under ``directory`` to ``want``.

        ``unchanged`` only reads the state.  Raises WriteCacheError, having
        changed nothing (or restored what it changed), when it cannot do it.
        """
        if want not in CHOICES:
            raise WriteCacheError(f"write_cache must be one of {', '.join(CHOICES)}, not {want!r}")
        storage = self._storage(directory)
        if want == "unchanged":
            return self._observe(storage.disks, storage.error)
        if self.pending():
            raise WriteCacheError(
                f"an earlier write-cache change is not restored yet ({self.journal}); "
                "restart the agent to replay it, or see docs/write-cache.md"
            )
        if not self._is_root():
            raise WriteCacheError("changing the write cache needs root; the agent is not root")
        if not storage.disks:
            raise WriteCacheError(
                f"{directory} is not on a local block device ({storage.error}); "
                "there is no write cache to change"
            )
        wanted = want == "on"
        planned: list[tuple[Disk, Backend, bool]] = []
        for disk in storage.disks:
            backend = self._backend_for(disk, self.mode)
            why = backend.unavailable(disk.name)
            if why:
                raise WriteCacheError(
                    f"cannot control the write cache of {disk.name} ({disk.kind}): {why}"
                )
            try:
                original = backend.get(disk.name)
            except WriteCacheError as exc:
                raise WriteCacheError(
                    f"{disk.name} does not report its write cache, so it cannot be changed "
                    f"and restored: {exc}"
                ) from exc
            planned.append((disk, backend, original))
        change = Change(
            requested=want,
            disks=[DiskChange(d.name, b.name, o, disk_identity(d)) for d, b, o in planned],
        )
        self._write_journal(change, job_id)
        try:
            for disk, backend, _original in planned:
                backend.set(disk.name, wanted)
                got = backend.get(disk.name)
                if got != wanted:
                    raise WriteCacheError(
                        f"{disk.name}: asked the {backend.name} backend for write cache {want}, "
                        f"but it reads back {_on(got)}"
                    )
        except WriteCacheError:
            problem = self.restore(change)
            if problem:
                log.error("%s", problem)
            raise
        change.env = self._env(
            want,
            [(d, b, o, wanted) for d, b, o in planned],
        )
        return change

    def restore(self, change: Change) -> str:
        """Put every changed disk back and verify; '' on success, else what went wrong.

        The journal is deleted only when every disk reads back its original state.
        """
        if not change.disks:
            return ""
        problems = []
        for entry in change.disks:
            problem = self._restore_one(entry)
            if problem:
                problems.append(problem)
        if problems:
            return "write cache NOT restored: " + "; ".join(problems) + f" (journal {self.journal})"
        self.journal.unlink(missing_ok=True)
        fsync_dir(self.journal.parent)
        log.info("write cache restored on %s", ", ".join(d.name for d in change.disks))
        return ""

    def replay(self) -> str:
        """At start-up: restore from a journal left by a crash.  '' when nothing is wrong."""
        if not self.pending():
            return ""
        try:
            data = json.loads(self.journal.read_text(encoding="utf-8"))
            if data.get("format") != JOURNAL_FORMAT or data.get("version") != 1:
                raise ValueError("not a version-1 write-cache journal")
            change = Change(
                requested=str(data["requested"]),
                disks=[
                    DiskChange(
                        str(d["name"]), str(d["backend"]), d["original"] == "on", str(d["identity"])
                    )
                    for d in data["disks"]
                ],
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return self._set_aside(f"the write-cache journal is unreadable ({exc})")
        log.warning(
            "found a write-cache journal from pid %s (job %s): restoring %s",
            data.get("pid"),
            data.get("job_id"),
            ", ".join(f"{d.name}={_on(d.original)}" for d in change.disks),
        )
        problem = self.restore(change)
        if problem and all(self._gone(d) for d in change.disks):
            return self._set_aside(problem)
        return problem

    def _gone(self, entry: DiskChange) -> bool:
        try:
            return disk_identity(self._describe(entry.name)) != entry.identity
        except OSError:
            return True

    def _set_aside(self, problem: str) -> str:
        """A journal that can never apply would block every write-cache job; keep it aside."""
        aside = self.journal.with_name(f"write-cache-journal.unapplied-{time.time_ns()}.json")
        os.replace(self.journal, aside)
        fsync_dir(self.journal.parent)
        return f"{problem}; journal moved to {aside} for a person to check"

    def _restore_one(self, entry: DiskChange) -> str:
        try:
            disk = self._describe(entry.name)
            if disk_identity(disk) != entry.identity:
                return f"{entry.name} is no longer the disk that was changed"
            backend = backend_by_name(entry.backend)
            backend.set(entry.name, entry.original)
            got = backend.get(entry.name)
        except (WriteCacheError, OSError) as exc:
            return f"{entry.name}: {exc}"
        if got != entry.original:
            return f"{entry.name} reads back {_on(got)} after restoring {_on(entry.original)}"
        return ""

    def _write_journal(self, change: Change, job_id: int | None) -> None:
        body = {
            "format": JOURNAL_FORMAT,
            "version": 1,
            "job_id": job_id,
            "pid": os.getpid(),
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "requested": change.requested,
            "disks": [
                {
                    "name": d.name,
                    "backend": d.backend,
                    "original": _on(d.original),
                    "identity": d.identity,
                }
                for d in change.disks
            ],
        }
        self.journal.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write(self.journal, json.dumps(body, indent=2).encode("utf-8"))

    def _observe(self, disks: list[Disk], error: str) -> Change:
        seen = []
        for disk in disks:
            backend = self._backend_for(disk, self.mode)
            try:
                if backend.unavailable(disk.name):
                    raise WriteCacheError("unavailable")
                state: bool | None = backend.get(disk.name)
            except WriteCacheError:
                # Reading a drive's cache often needs root; the kernel's view is always readable.
                backend = KernelBackend()
                try:
                    state = backend.get(disk.name)
                except WriteCacheError:
                    state = None
            seen.append((disk, backend, state, state))
        change = Change(requested="unchanged", env=self._env("unchanged", seen))
        if error and not disks:
            change.env["note"] = error
        return change

    @staticmethod
    def _env(
        requested: str, disks: list[tuple[Disk, Backend, bool | None, bool | None]]
    ) -> dict[str, Any]:
        states = {d.name: s for d, _b, _o, s in disks}
        values = set(states.values())
        if not values or None in values:
            state = "unknown"
        elif len(values) == 1:
            state = _on(values.pop() is True)
        else:
            state = "mixed"
        changed = {
            d.name: b.changes_device and o is not None and s is not None and o != s
            for d, b, o, s in disks
        }
        return {
            "requested": requested,
            "state": state,
            # Whether the device's own cache was switched (not only the kernel's view of it).
            "device_changed": any(changed.values()),
            "disks": {
                d.name: {
                    "backend": b.name,
                    "changes_device": b.changes_device,
                    "device_changed": changed[d.name],
                    "before": "unknown" if o is None else _on(o),
                    "during": "unknown" if s is None else _on(s),
                }
                for d, b, o, s in disks
            },
        }
