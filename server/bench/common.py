"""Shared by the benchmark scripts: a database (PostgreSQL cluster or SQLite file) and
a server subprocess with an admin token and a registered agent holding a running job.

The process helpers are tests/live.py's, so the benchmarks and the system tests
start servers the same way.
"""

import os
import statistics
import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SERVER_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SERVER_DIR))
# Before xaclab_server.core.config is imported: it reads the environment.
os.environ.setdefault("XACLAB_REGISTRATION_TOKEN", "bench-registration-token-0123456789")
os.environ.setdefault("XACLAB_ENV", "test")

import httpx  # noqa: E402

from tests.live import REGISTRATION_TOKEN, PgCluster, ServerProcess, admin_token  # noqa: E402
from xaclab_server.core.migrations import upgrade_head  # noqa: E402

AGENT = "/api/agent/v1"


@contextmanager
def database(kind: str) -> Iterator[str]:
    """A migrated database URL: ``postgresql`` (a cluster of our own) or ``sqlite``."""
    if kind == "postgresql":
        with PgCluster() as cluster:
            yield cluster.create_database("xaclab_bench")
    else:
        with tempfile.TemporaryDirectory(prefix="xaclab-bench-") as tmp:
            url = f"sqlite:///{tmp}/xaclab.sqlite3"
            upgrade_head(url)
            yield url


@dataclass
class Lab:
    server: ServerProcess
    user: dict[str, str]  # headers of an admin
    agent: dict[str, str]  # headers of an approved agent
    machine_id: int


@contextmanager
def lab(database_url: str, log_dir: Path, **env: str) -> Iterator[Lab]:
    token = admin_token(database_url)
    with ServerProcess(database_url, log_dir / "server.log", **env) as server:
        machine_id, agent = register(server.base_url, "bench-01")
        yield Lab(server, {"Authorization": f"Bearer {token}"}, agent, machine_id)


def register(base_url: str, name: str) -> tuple[int, dict[str, str]]:
    reply = httpx.post(
        f"{base_url}{AGENT}/register",
        json={"registration_token": REGISTRATION_TOKEN, "name": name, "fingerprint": {"n": name}},
    )
    reply.raise_for_status()
    body = reply.json()
    return body["machine_id"], {"Authorization": f"Bearer {body['agent_token']}"}


def running_job(client: httpx.Client, lab: Lab, agent: dict[str, str] | None = None) -> int:
    """Queue a page-touch run for the lab's machine and claim its job."""
    reply = client.post(
        "/api/v1/runs",
        json={"machine_id": lab.machine_id, "suite": "page-touch", "profile": "quick"},
        headers=lab.user,
    )
    reply.raise_for_status()
    claimed = client.post(f"{AGENT}/jobs/claim", params={"wait": 0}, headers=agent or lab.agent)
    claimed.raise_for_status()
    job_id: int = claimed.json()["job_id"]
    return job_id


def result(samples: list[float], **params: Any) -> dict[str, Any]:
    return {
        "format": "xaclab-result",
        "format_version": 1,
        "suite": "page-touch",
        "benchmark": "page_touch",
        "sut": "libxac",
        "params": {"n": 1, "access": "read", **params},
        "metric": "time_per_page",
        "unit": "us",
        "better": "lower",
        "samples": samples,
        "library": {"name": "libxac", "version": "0.1.0", "git_revision": "3f2a9c1"},
    }


def upload_body(results: list[dict[str, Any]]) -> dict[str, Any]:
    return {"upload_id": str(uuid.uuid4()), "results": results}


def percentile(values: list[float], percent: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(percent / 100 * len(ordered) + 0.5) - 1))]


def median(values: list[float]) -> float:
    return statistics.median(values)
