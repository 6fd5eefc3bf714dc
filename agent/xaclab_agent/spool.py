"""The spool: every upload and every finish message is written to disk before it is sent.

Entries are files ``<seq>-<kind>-<job_id>-<id>.json`` in the spool directory,
written atomically (``.tmp``, fsync, rename) and deleted only after the
server answered 2xx.  :meth:`Spool.drain` sends them oldest first and stops at
the first retryable failure, so a job's results always reach the server
before its finish message.  An entry the server refuses for good (a 4xx
other than 401) is moved to ``rejected/`` with the reason beside it: kept
for a person to look at, no longer in the way.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xaclab_agent.atomic import TMP_SUFFIX, atomic_write, fsync_dir
from xaclab_agent.client import AgentClient, RetryPolicy
from xaclab_agent.errors import AuthenticationError, RequestRejected, UnavailableError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DrainReport:
    sent: int = 0
    duplicates: int = 0
    rejected: int = 0
    remaining: int = 0
    error: str = ""


class Spool:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.rejected_dir = directory / "rejected"
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._last_seq = max((_seq(p) for p in self.pending()), default=0)
        self._lock = threading.Lock()

    def add_results(self, job_id: int, results: list[dict[str, Any]]) -> Path:
        """Spool one upload (within the server's limits) under a fresh ``upload_id``."""
        upload_id = str(uuid.uuid4())
        body = {"kind": "results", "job_id": job_id, "upload_id": upload_id, "results": results}
        return self._write("results", job_id, upload_id, body)

    def add_log(self, job_id: int, seq: int, stream: str, text: str) -> Path:
        """A log chunk that could not be sent while the job ran; ``seq`` makes resending safe."""
        body = {"kind": "log", "job_id": job_id, "seq": seq, "stream": stream, "text": text}
        return self._write("log", job_id, f"{seq}-{uuid.uuid4()}", body)

    def add_finish(self, job_id: int, status: str, message: str) -> Path:
        entry_id = str(uuid.uuid4())
        body = {"kind": "finish", "job_id": job_id, "status": status, "message": message}
        return self._write("finish", job_id, entry_id, body)

    def pending(self) -> list[Path]:
        """Entries not yet accepted by the server, oldest first."""
        return sorted(p for p in self.directory.glob("*.json") if not p.name.endswith(TMP_SUFFIX))

    def drain(self, client: AgentClient, *, retry: RetryPolicy | None = None) -> DrainReport:
        """Send pending entries in order; stop at the first retryable failure.

        Raises AuthenticationError (the entry stays): a bad token is the
        operator's problem and no entry is to blame for it.
        """
        self._remove_stale_tmp()
        sent = duplicates = rejected = 0
        entries = self.pending()
        for index, path in enumerate(entries):
            try:
                entry = json.loads(path.read_text(encoding="utf-8"))
                duplicate = self._send(client, entry, retry)
            except UnavailableError as exc:
                return DrainReport(sent, duplicates, rejected, len(entries) - index, str(exc))
            except AuthenticationError:
                raise
            except (RequestRejected, ValueError, KeyError, TypeError) as exc:
                self._reject(path, str(exc))
                rejected += 1
                continue
            path.unlink()
            fsync_dir(self.directory)
            sent += 1
            duplicates += duplicate
        return DrainReport(sent, duplicates, rejected, 0)

    @staticmethod
    def _send(client: AgentClient, entry: dict[str, Any], retry: RetryPolicy | None) -> bool:
        job_id = int(entry["job_id"])
        if entry["kind"] == "results":
            receipt = client.upload_results(
                job_id, upload_id=str(entry["upload_id"]), results=entry["results"], retry=retry
            )
            return receipt.duplicate
        if entry["kind"] == "log":
            client.send_log(
                job_id,
                seq=int(entry["seq"]),
                stream=str(entry["stream"]),
                text=str(entry["text"]),
                retry=retry,
            )
            return False
        if entry["kind"] == "finish":
            client.finish(
                job_id, status=str(entry["status"]), message=str(entry["message"]), retry=retry
            )
            return False
        raise ValueError(f"unknown spool entry kind {entry['kind']!r}")

    def _write(self, kind: str, job_id: int, entry_id: str, body: dict[str, Any]) -> Path:
        # Names sort in creation order, even across restarts and a clock stepping back.
        with self._lock:  # the log streamer spools from its own thread
            self._last_seq = max(time.time_ns(), self._last_seq + 1)
            seq = self._last_seq
        path = self.directory / f"{seq:020d}-{kind}-{job_id}-{entry_id}.json"
        atomic_write(path, json.dumps(body, separators=(",", ":")).encode("utf-8"))
        return path

    def _reject(self, path: Path, reason: str) -> None:
        log.error("server refused spooled %s for good: %s", path.name, reason)
        self.rejected_dir.mkdir(exist_ok=True, mode=0o700)
        atomic_write(self.rejected_dir / (path.stem + ".reason.txt"), reason.encode() + b"\n")
        os.replace(path, self.rejected_dir / path.name)
        fsync_dir(self.directory)

    def _remove_stale_tmp(self) -> None:
        for tmp in self.directory.glob("*" + TMP_SUFFIX):
            tmp.unlink(missing_ok=True)


def _seq(path: Path) -> int:
    head = path.name.split("-", 1)[0]
    return int(head) if head.isdigit() else 0
