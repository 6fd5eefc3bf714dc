"""How much CPU the agent itself uses while a benchmark runs.

Runs one job through the real daemon code (heartbeats, progress, log
streaming, the runner's wait loop) against an in-memory server, with a fake
benchmark program that mostly sleeps and prints a progress line and a
diagnostic every 0.5 s.  The agent's CPU time comes from
``getrusage(RUSAGE_SELF)``, which counts every thread of this process and
none of the child's.  Prints the agent's share of one core.

    .venv/bin/python agent/bench/agent_overhead.py [--seconds 20]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from xaclab_agent.client import AgentClient
from xaclab_agent.config import Config
from xaclab_agent.daemon import Daemon

RESULT = {
    "format": "xaclab-result",
    "format_version": 1,
    "suite": "idle",
    "benchmark": "sleep",
    "sut": "os",
    "params": {},
    "metric": "time",
    "unit": "s",
    "better": "lower",
    "samples": [1.0],
    "library": {"name": "libxac", "version": "0", "git_revision": "0"},
}
PROGRAM = """import json, sys, time
steps = int(sys.argv[-1])
for i in range(steps):
    time.sleep(0.5)
    print("xaclab-progress %.3f step %d" % ((i + 1) / steps, i), file=sys.stderr, flush=True)
    print("diagnostic line %d" % i, file=sys.stderr, flush=True)
print(json.dumps(RESULT_JSON), flush=True)
"""


def handler(jobs: list[dict[str, Any]]) -> Any:
    finished: set[int] = set()

    def handle(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path.endswith("/claim"):
            pending = [j for j in jobs if j["job_id"] not in finished]
            return httpx.Response(200, json=pending[0]) if pending else httpx.Response(204)
        if path.endswith("/finish"):
            finished.add(int(path.split("/")[-2]))
        if path.endswith("/results"):
            return httpx.Response(201, json={"stored": 1, "duplicate": False})
        return httpx.Response(200, json={"status": "running", "cancel": False})

    return handle


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    steps = max(int(args.seconds / 0.5), 1)
    base = Path(tempfile.mkdtemp(prefix="xaclab-overhead-"))
    (base / "bin").mkdir()
    (base / "suites").mkdir()
    program = base / "bin" / "idle_bench"
    program.write_text(f"#!{sys.executable}\n" + PROGRAM.replace("RESULT_JSON", repr(RESULT)))
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    suite = {
        "name": "idle",
        "programs": ["idle_bench"],
        "profiles": {"quick": []},
        "params": {"steps": {"type": "integer", "min": 1, "max": 100000, "flag": "--steps"}},
    }
    (base / "suites" / "idle.json").write_text(json.dumps(suite))
    config = Config(
        state_dir=base / "state",
        bin_dir=base / "bin",
        work_dir=base / "work",
        suites_dir=base / "suites",
        claim_wait=0,
    )
    jobs = [
        {"job_id": 1, "run_id": 1, "suite": "idle", "profile": "quick", "params": {"steps": steps}}
    ]
    client = AgentClient("http://agent.test", "t", transport=httpx.MockTransport(handler(jobs)))
    daemon = Daemon(config, client, fingerprint={"fingerprint_hash": "x"}, rng=random.Random(0))
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.monotonic()
    outcome = daemon.process(daemon.client.claim(wait=0) or sys.exit("no job"))
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    sys.stdout.write(
        f"job {outcome.status} in {wall:.1f} s wall; agent CPU {cpu * 1000:.0f} ms "
        f"= {100 * cpu / wall:.2f}% of one core\n"
    )
    return 0 if outcome.succeeded else 1


if __name__ == "__main__":
    sys.exit(main())
