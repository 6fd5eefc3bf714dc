"""Fingerprints and result envs as a real agent sends them, for the validity tests.

``FINGERPRINT`` is shaped like ``xaclab-agent fingerprint``'s output on a
Debian machine with one SATA SSD; the envs add what the agent adds to every
result of a job: the write cache it ran under and the load around it.
"""

import copy
from typing import Any

FINGERPRINT: dict[str, Any] = {
    "fingerprint_version": 2,
    "hostname": "lab-ssd",
    "arch": "x86_64",
    "cpu": {"model": "AMD EPYC 7302", "cores": 16, "logical_cpus": 32, "governor": "performance"},
    "memory": {"total_bytes": 68719476736, "total_gib": 64},
    "kernel": {"system": "Linux", "release": "6.1.0-18-amd64"},
    "os": {"id": "debian", "version_id": "12", "pretty_name": "Debian GNU/Linux 12 (bookworm)"},
    "storage": {
        "directory": "/var/tmp/xaclab-agent",
        "fstype": "ext4",
        "mount_options": "rw,relatime",
        "disk_models": ["ata:Samsung SSD 870 EVO 1TB"],
        "rotational": [False],
        "schedulers": ["mq-deadline"],
    },
}
CALM = {"loadavg_1m": 0.05, "loadavg_5m": 0.1, "runnable_tasks": 1, "procs_running": 1}


def fingerprint(**changes: Any) -> dict[str, Any]:
    """FINGERPRINT with sections replaced, e.g. ``kernel={"release": "6.12.0"}``."""
    changed = copy.deepcopy(FINGERPRINT)
    for section, value in changes.items():
        changed[section] = {**changed.get(section, {}), **value}
    return changed


def write_cache(
    requested: str, state: str, *, backend: str = "ata", disk: str = "sda"
) -> dict[str, Any]:
    device = backend != "kernel"
    return {
        "requested": requested,
        "state": state,
        "device_changed": device and requested != "unchanged",
        "disks": {
            disk: {
                "backend": backend,
                "changes_device": device,
                "before": "on",
                "during": state,
            }
        },
    }


def env(
    *,
    base: dict[str, Any] | None = None,
    noisy: bool = False,
    cache: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What the agent puts into a result's env: fingerprint, write cache, hygiene."""
    busy = {"loadavg_1m": 3.2, "loadavg_5m": 2.8, "runnable_tasks": 5, "procs_running": 5}
    return {
        **copy.deepcopy(base or FINGERPRINT),
        "write_cache": cache or write_cache("unchanged", "on"),
        "hygiene": {
            "pinned_cpu": None,
            "dropped_caches": False,
            "before": busy if noisy else CALM,
            "after": CALM,
            "noisy_threshold": 1.0,
            "noisy": noisy,
        },
    }


def steady(center: float, n: int = 30) -> list[float]:
    """n samples within ±1.5% of ``center``: a coefficient of variation near 0.9%."""
    return [round(center * (1 + ((i * 7) % 11 - 5) / 330), 6) for i in range(n)]
