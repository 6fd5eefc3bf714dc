"""The running program's PID on disk, so a restarted agent can stop an orphan.

The program runs in its own session, so it outlives an agent killed with
SIGKILL.  Before the new agent restores the write cache under it, it kills
that process group — but only if the PID still names the same process (its
start time in ``/proc/<pid>/stat`` matches), never a stranger that reused it.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import time
from pathlib import Path

from xaclab_agent.atomic import atomic_write

CHILD_FILE = "running-program.json"

log = logging.getLogger(__name__)


def start_time(pid: int) -> int | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # Field 22; the command name (field 2) may contain spaces, so split after its ')'.
    fields = text.rsplit(")", 1)[-1].split()
    if len(fields) <= 19 or fields[0] in ("Z", "X"):  # a zombie has finished running
        return None
    return int(fields[19])


class ChildRecord:
    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / CHILD_FILE

    def started(self, pid: int) -> None:
        body = {"pid": pid, "start_time": start_time(pid)}
        atomic_write(self.path, json.dumps(body).encode("utf-8"))

    def exited(self, _pid: int) -> None:
        self.path.unlink(missing_ok=True)

    def reap_orphan(self, *, wait: float = 10.0) -> str:
        """Kill the program a crashed agent left running; a sentence saying what was done."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            pid, started = int(data["pid"]), data.get("start_time")
        except FileNotFoundError:
            return ""
        except (OSError, ValueError, KeyError, TypeError) as exc:
            self.path.unlink(missing_ok=True)
            return f"ignored an unreadable {self.path.name}: {exc}"
        message = f"program {pid} of the previous agent has already exited"
        if started is not None and start_time(pid) == started:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + wait
            while start_time(pid) == started and time.monotonic() < deadline:
                time.sleep(0.05)
            message = f"killed program {pid} left running by the previous agent"
        self.path.unlink(missing_ok=True)
        log.warning("%s", message)
        return message
