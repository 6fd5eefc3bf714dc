"""The issue's change-point probe on the dashboards' server: a machine whose 20 runs carry the
same page_touch result, 15 % slower from run 13 on, uploaded through the agent API, so the
change-point annotation and panels have a change to show.  The server's own detector finds
it; nothing is written to the database by hand."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx

PROBE_MACHINE = "dash-probe-04"
RUNS = 20
SLOWER_FROM = 13


def _record(value: float) -> dict[str, Any]:
    return {
        "format": "xaclab-result",
        "format_version": 1,
        "suite": "page-touch",
        "benchmark": "page_touch",
        "sut": "libxac",
        "params": {"n": 64, "access": "write", "advisory": False, "durability": "nondurable"},
        "metric": "time_per_page",
        "unit": "us",
        "better": "lower",
        "samples": [value * 0.99, value, value * 1.01, value * 0.995, value * 1.005],
        "library": {"name": "libxac", "version": "0.1.0", "git_revision": "0123456789ab"},
    }


def seed_probe(base: str, registration_token: str, api_token: str, timeout: float = 120) -> int:
    """Upload the probe's runs; the id of the alert the server raised."""
    user = {"Authorization": f"Bearer {api_token}"}
    agent_api = f"{base}/api/agent/v1"
    with httpx.Client(timeout=30) as http:
        reply = http.post(
            f"{agent_api}/register",
            json={
                "registration_token": registration_token,
                "name": PROBE_MACHINE,
                "fingerprint": {"hostname": PROBE_MACHINE},
            },
        )
        assert reply.status_code == 201, reply.text
        machine_id = reply.json()["machine_id"]
        agent = {"Authorization": f"Bearer {reply.json()['agent_token']}"}
        for run in range(1, RUNS + 1):
            made = http.post(
                f"{base}/api/v1/runs",
                json={"machine_id": machine_id, "suite": "page-touch", "profile": "quick"},
                headers=user,
            )
            assert made.status_code == 201, made.text
            job = http.post(f"{agent_api}/jobs/claim", params={"wait": 5}, headers=agent).json()
            value = 10.0 * (1.15 if run >= SLOWER_FROM else 1.0)
            sent = http.post(
                f"{agent_api}/jobs/{job['job_id']}/results",
                json={"upload_id": str(uuid.uuid4()), "results": [_record(value)]},
                headers=agent,
            )
            assert sent.status_code == 201, sent.text
            done = http.post(
                f"{agent_api}/jobs/{job['job_id']}/finish", json={"status": "succeeded"}, headers=agent
            )
            assert done.status_code == 200, done.text
        deadline = time.monotonic() + timeout
        while True:
            alerts = http.get(
                f"{base}/api/v1/alerts", params={"machine_id": machine_id}, headers=user
            ).json()["alerts"]
            if alerts or time.monotonic() > deadline:
                break
            time.sleep(0.5)
    assert alerts, "the server's watcher raised no alert for the probe"
    alert_id: int = alerts[0]["id"]
    return alert_id
