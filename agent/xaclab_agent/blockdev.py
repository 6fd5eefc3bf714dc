"""The storage under a directory: its mount, and the block-device stack down to the disks.

The directory's mount comes from ``/proc/self/mountinfo`` (the entry whose
``major:minor`` is the directory's ``st_dev`` with the longest mount point
above it).  The device is then resolved through sysfs: a partition to its
parent (``/sys/class/block/<part>/partition`` exists, the parent is the
directory above), device-mapper and md devices to their ``slaves/``, down to
the disks that hold the data.  Every path here is read, never written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SYS_BLOCK = Path("/sys/class/block")
SYS_DEV_BLOCK = Path("/sys/dev/block")
MOUNTINFO = Path("/proc/self/mountinfo")
MAX_DEPTH = 16


@dataclass(frozen=True)
class Mount:
    mount_point: str
    device: str  # major:minor as in mountinfo
    fstype: str
    source: str
    options: str  # per-mount options, then the superblock's (mountinfo fields 6 and 11)


@dataclass
class Disk:
    """A leaf of the stack: a whole disk (or a loop device, or a virtual disk)."""

    name: str
    kind: str  # nvme, ata, scsi, virtio, loop, mmc, other
    model: str = ""
    serial: str = ""
    rotational: bool | None = None
    scheduler: str = ""
    write_cache: str = ""  # the kernel's view: "write back" / "write through"
    size_bytes: int = 0
    backing_file: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "kind": self.kind,
            "model": self.model,
            "rotational": self.rotational,
            "scheduler": self.scheduler,
            "write_cache_kernel": self.write_cache,
            "size_bytes": self.size_bytes,
        }
        if self.serial:
            out["serial"] = self.serial
        if self.backing_file:
            out["backing_file"] = self.backing_file
        out.update(self.extra)
        return out


@dataclass
class Storage:
    directory: str
    mount: Mount | None
    stack: list[str]  # device names from the filesystem's device down, e.g. [dm-0, sda2, sda]
    disks: list[Disk]
    error: str = ""


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def parse_mountinfo(text: str) -> list[Mount]:
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields_l, fields_r = left.split(), right.split()
        if len(fields_l) < 6 or len(fields_r) < 2:
            continue
        super_opts = fields_r[2] if len(fields_r) > 2 else ""
        mounts.append(
            Mount(
                mount_point=_unescape(fields_l[4]),
                device=fields_l[2],
                fstype=fields_r[0],
                source=_unescape(fields_r[1]),
                options=",".join(o for o in (fields_l[5], super_opts) if o),
            )
        )
    return mounts


def _unescape(value: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as octal (``\\040``)."""
    if "\\" not in value:
        return value
    out, i = [], 0
    while i < len(value):
        if value[i] == "\\" and i + 4 <= len(value) and value[i + 1 : i + 4].isdigit():
            out.append(chr(int(value[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(value[i])
            i += 1
    return "".join(out)


def find_mount(directory: Path, mountinfo: Path = MOUNTINFO) -> Mount | None:
    real = os.path.realpath(directory)
    st_dev = os.stat(real).st_dev
    wanted = f"{os.major(st_dev)}:{os.minor(st_dev)}"
    under = [m for m in parse_mountinfo(read_text(mountinfo)) if _is_under(real, m.mount_point)]
    matching = [m for m in under if m.device == wanted] or under
    best: Mount | None = None
    for mount in matching:
        # Later entries shadow earlier ones on the same mount point.
        if best is None or len(mount.mount_point) >= len(best.mount_point):
            best = mount
    return best


def _is_under(path: str, mount_point: str) -> bool:
    return mount_point == "/" or path == mount_point or path.startswith(mount_point + "/")


def device_name(mount: Mount) -> str | None:
    """The kernel name (``sda1``, ``dm-0``) of the mount's block device, if it has one."""
    link = SYS_DEV_BLOCK / mount.device
    if link.exists():
        return Path(os.path.realpath(link)).name
    # btrfs and friends report an anonymous st_dev; the source names the device.
    if mount.source.startswith("/dev/"):
        try:
            rdev = os.stat(mount.source).st_rdev
        except OSError:
            return None
        link = SYS_DEV_BLOCK / f"{os.major(rdev)}:{os.minor(rdev)}"
        if link.exists():
            return Path(os.path.realpath(link)).name
    return None


def resolve_stack(name: str) -> tuple[list[str], list[str]]:
    """(every device from ``name`` down, the leaf disks), following partitions and slaves."""
    stack: list[str] = []
    disks: list[str] = []

    def walk(dev: str, depth: int) -> None:
        if depth > MAX_DEPTH or dev in stack:
            return
        stack.append(dev)
        node = Path(os.path.realpath(SYS_BLOCK / dev))
        if (node / "partition").exists():
            walk(node.parent.name, depth + 1)
            return
        slaves = sorted(p.name for p in (node / "slaves").glob("*")) if node.exists() else []
        if slaves:
            for slave in slaves:
                walk(slave, depth + 1)
            return
        if dev not in disks:
            disks.append(dev)

    walk(name, 0)
    return stack, disks


def disk_kind(name: str) -> str:
    if name.startswith("nvme"):
        return "nvme"
    if name.startswith("loop"):
        return "loop"
    if name.startswith("vd"):
        return "virtio"
    if name.startswith("mmcblk"):
        return "mmc"
    device = SYS_BLOCK / name / "device"
    if (device / "scsi_disk").is_dir():
        vendor = read_text(device / "vendor")
        return "ata" if vendor.upper() == "ATA" else "scsi"
    return "other"


def describe_disk(name: str) -> Disk:
    base = SYS_BLOCK / name
    kind = disk_kind(name)
    device = base / "device"
    model = read_text(device / "model")
    serial = read_text(device / "serial") or read_text(device / "wwid")
    if kind == "loop":
        model = "loop"
    elif kind == "virtio" and not model:
        model = "virtio " + (read_text(device / "vendor") or "disk")
    rotational_text = read_text(base / "queue" / "rotational")
    sectors = read_text(base / "size")
    return Disk(
        name=name,
        kind=kind,
        model=" ".join(model.split()),
        serial=serial,
        rotational=None if rotational_text == "" else rotational_text == "1",
        scheduler=active_scheduler(read_text(base / "queue" / "scheduler")),
        write_cache=read_text(base / "queue" / "write_cache"),
        size_bytes=int(sectors) * 512 if sectors.isdigit() else 0,
        backing_file=read_text(base / "loop" / "backing_file") if kind == "loop" else "",
    )


def active_scheduler(text: str) -> str:
    """``mq-deadline kyber [none]`` → ``none``."""
    for word in text.split():
        if word.startswith("[") and word.endswith("]"):
            return word[1:-1]
    return text.strip()


def storage_for(directory: Path) -> Storage:
    """The storage under ``directory`` (which must exist)."""
    try:
        mount = find_mount(directory)
    except OSError as exc:
        return Storage(str(directory), None, [], [], error=f"cannot stat {directory}: {exc}")
    if mount is None:
        return Storage(str(directory), None, [], [], error="no mount found in mountinfo")
    name = device_name(mount)
    if name is None:
        # tmpfs, overlay, NFS ...: no local block device to describe or to control.
        return Storage(str(directory), mount, [], [], error=f"{mount.fstype} has no block device")
    stack, leaves = resolve_stack(name)
    return Storage(str(directory), mount, stack, [describe_disk(d) for d in leaves])
