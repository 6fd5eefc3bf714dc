"""The machine fingerprint: what a result was measured on.

The fingerprint is a JSON object of sections (``cpu``, ``memory``, ``kernel``,
``os``, ``libxac``...), each built by one probe in :data:`PROBES`, plus
``storage``: the directory under test, its filesystem and mount options, and
the block-device stack resolved down to the disks (model, rotational, I/O
scheduler, the kernel's and, where a tool answers, the device's write cache).

``fingerprint_hash`` (:func:`xaclab_contracts.fingerprint.fingerprint_hash`, the
function the server hashes with) is a SHA-256 over the ``identity_fields`` of
contracts/fingerprint-fields.json only: the fields that decide whether two
machines' numbers are comparable — CPU model, cores and governor, memory,
kernel, distribution, filesystem, mount options, disk models, rotational and
scheduler.  Two machines whose CPUs or disks differ
never share a hash.  Left out on purpose: the host name (renaming a machine
must not split its history), the library build (results carry it), the
write-cache state (a factor each result records) and anything volatile
(load, free memory, uptime — those go into a job's ``hygiene`` section).
"""

from __future__ import annotations

import os
import platform
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from xaclab_contracts.fingerprint import fingerprint_hash

from xaclab_agent.blockdev import storage_for
from xaclab_agent.writecache import device_state

FINGERPRINT_VERSION = 2
AGENT_VERSION = "0.1.0"
CPUFREQ = Path("/sys/devices/system/cpu")


def cpu_info(cpuinfo: Path = Path("/proc/cpuinfo")) -> dict[str, Any]:
    model = platform.processor() or "unknown"
    physical: set[tuple[str, str]] = set()
    current: dict[str, str] = {}
    try:
        lines = cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    for line in [*lines, ""]:
        key, sep, value = line.partition(":")
        if sep:
            current[key.strip()] = value.strip()
            continue
        if current:
            model = current.get("model name", current.get("Model", model))
            if "core id" in current:
                physical.add((current.get("physical id", "0"), current["core id"]))
            current = {}
    logical = os.cpu_count() or 0
    return {
        "model": model,
        "cores": len(physical) or logical,
        "logical_cpus": logical,
        **cpufreq_info(),
    }


def cpufreq_info(base: Path = CPUFREQ) -> dict[str, Any]:
    governors = sorted(
        {_read_first_line(p) for p in base.glob("cpu[0-9]*/cpufreq/scaling_governor")}
    )
    max_freqs = [_read_first_line(p) for p in base.glob("cpu[0-9]*/cpufreq/cpuinfo_max_freq")]
    khz = max((int(f) for f in max_freqs if f.isdigit()), default=0)
    return {
        # "unavailable": no cpufreq (many VMs); "a+b": CPUs with different governors.
        "governor": "+".join(g for g in governors if g) or "unavailable",
        "max_freq_mhz": khz // 1000,
    }


def memory_info(meminfo: Path = Path("/proc/meminfo")) -> dict[str, Any]:
    total = 0
    try:
        for line in meminfo.read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal:"):
                total = int(line.split()[1]) * 1024
                break
    except (OSError, ValueError, IndexError):
        pass
    # Rounded, because MemTotal moves by a few MiB with kernel reservations.
    return {"total_bytes": total, "total_gib": round(total / 2**30)}


def kernel_info() -> dict[str, Any]:
    uname = platform.uname()
    return {"system": uname.system, "release": uname.release, "version": uname.version}


def os_info(os_release: Path = Path("/etc/os-release")) -> dict[str, Any]:
    fields: dict[str, str] = {}
    try:
        for line in os_release.read_text(encoding="utf-8").splitlines():
            key, sep, value = line.partition("=")
            if sep:
                fields[key.strip()] = value.strip().strip('"')
    except OSError:
        pass
    return {
        "id": fields.get("ID", "unknown"),
        "version_id": fields.get("VERSION_ID", ""),
        "pretty_name": fields.get("PRETTY_NAME", ""),
    }


def libxac_info(bin_dir: Path | None) -> dict[str, Any]:
    """Version from ``VERSION`` beside or above the bin dir; revision from a
    ``GIT_REVISION`` file there (installed layout) or git (a checkout)."""
    info = {"version": "unknown", "git_revision": "unknown", "compiler": "unknown"}
    if bin_dir is None:
        return info
    for base in (bin_dir, bin_dir.parent):
        version = _read_first_line(base / "VERSION")
        if version:
            info["version"] = version
            info["git_revision"] = _read_first_line(base / "GIT_REVISION") or _git_rev(base)
            info["compiler"] = _read_first_line(base / "COMPILER") or _cc_version()
            break
    return info


def _cc_version() -> str:
    """The compiler a checkout builds with (an installed layout writes COMPILER instead)."""
    try:
        done = subprocess.run(
            ["cc", "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    lines = done.stdout.strip().splitlines()
    return lines[0][:120] if done.returncode == 0 and lines else "unknown"


def storage_info(directory: Path | None) -> dict[str, Any]:
    """The ``storage`` section for the directory under test (created if missing)."""
    if directory is None:
        return {"error": "no directory under test"}
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return {"directory": str(directory), "error": f"cannot create it: {exc}"}
    found = storage_for(directory)
    disks = []
    for disk in found.disks:
        entry = disk.as_dict()
        entry.update(device_state(disk))
        disks.append(entry)
    mount = found.mount
    section: dict[str, Any] = {
        "directory": found.directory,
        "mount_point": mount.mount_point if mount else "",
        "fstype": mount.fstype if mount else "unknown",
        "source": mount.source if mount else "",
        "mount_options": mount.options if mount else "",
        "stack": found.stack,
        "disks": disks,
        "disk_models": [f"{d.kind}:{d.model}" for d in found.disks],
        "rotational": [d.rotational for d in found.disks],
        "schedulers": [d.scheduler for d in found.disks],
    }
    if found.error:
        section["error"] = found.error
    return section


def _read_first_line(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip().splitlines()[0][:64]
    except (OSError, IndexError):
        return ""


def _git_rev(directory: Path) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(directory), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else "unknown"


Probe = Callable[[Path | None], Any]

PROBES: dict[str, Probe] = {
    "hostname": lambda _: socket.gethostname(),
    "arch": lambda _: platform.machine(),
    "cpu": lambda _: cpu_info(),
    "memory": lambda _: memory_info(),
    "kernel": lambda _: kernel_info(),
    "os": lambda _: os_info(),
    "libxac": libxac_info,
    "agent": lambda _: {"version": AGENT_VERSION},
}


def collect_fingerprint(
    bin_dir: Path | None = None, work_dir: Path | None = None
) -> dict[str, Any]:
    """Run every probe (``storage`` for ``work_dir``) and add ``fingerprint_hash``."""
    fingerprint: dict[str, Any] = {"fingerprint_version": FINGERPRINT_VERSION}
    for name, probe in PROBES.items():
        fingerprint[name] = probe(bin_dir)
    fingerprint["storage"] = storage_info(work_dir)
    fingerprint["fingerprint_hash"] = fingerprint_hash(fingerprint)
    return fingerprint


def with_storage(fingerprint: dict[str, Any], directory: Path) -> dict[str, Any]:
    """The fingerprint for a job whose directory under test is ``directory``."""
    if fingerprint.get("storage", {}).get("directory") == str(directory):
        return fingerprint
    updated = {**fingerprint, "storage": storage_info(directory)}
    updated["fingerprint_hash"] = fingerprint_hash(updated)
    return updated
