"""Measurement hygiene: system load around a run, CPU pinning, dropping the page cache.

Load is read from ``/proc/loadavg`` (1-minute average, runnable/total tasks)
and ``/proc/stat`` (``procs_running``, which counts the reading process
itself).  A run is flagged ``noisy`` when, before or after it, the 1-minute
load average or the number of other runnable tasks was above the threshold.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from xaclab_agent.errors import AgentError

LOADAVG = Path("/proc/loadavg")
PROC_STAT = Path("/proc/stat")
DROP_CACHES = Path("/proc/sys/vm/drop_caches")


class HygieneError(AgentError):
    """Pinning or dropping caches was asked for and cannot be done."""


def load_snapshot(loadavg: Path = LOADAVG, stat: Path = PROC_STAT) -> dict[str, Any]:
    snap: dict[str, Any] = {}
    try:
        fields = loadavg.read_text(encoding="ascii").split()
        snap["loadavg_1m"] = float(fields[0])
        snap["loadavg_5m"] = float(fields[1])
        snap["runnable_tasks"] = int(fields[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        pass
    try:
        for line in stat.read_text(encoding="ascii").splitlines():
            if line.startswith("procs_running "):
                snap["procs_running"] = int(line.split()[1])
                break
    except (OSError, ValueError, IndexError):
        pass
    return snap


def others_running(snap: dict[str, Any]) -> int:
    """Runnable tasks besides the one reading /proc/stat."""
    running = snap.get("procs_running")
    return max(int(running) - 1, 0) if isinstance(running, int) else 0


def is_noisy(before: dict[str, Any], after: dict[str, Any], threshold: float) -> bool:
    for snap in (before, after):
        if float(snap.get("loadavg_1m", 0.0)) > threshold or others_running(snap) > threshold:
            return True
    return False


def drop_caches() -> None:
    """sync, then drop the page cache, dentries and inodes (root only)."""
    if os.geteuid() != 0:
        raise HygieneError("drop_caches needs root; the agent is not root")
    os.sync()
    try:
        DROP_CACHES.write_text("3\n", encoding="ascii")
    except OSError as exc:
        raise HygieneError(f"cannot write {DROP_CACHES}: {exc}") from exc
