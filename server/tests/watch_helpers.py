"""Series for the change-point tests, uploaded run by run as an agent uploads them."""

import time
from typing import Any

from fastapi import FastAPI
from xaclab_testsupport.receiver import Receiver

from tests.helpers import HttpClient, result_record
from tests.reproduction_helpers import store_results

__all__ = ["Receiver", "alerts_of", "probe_values", "run_of", "seed_alert", "upload_runs"]

PARAMS = {"n": 64, "access": "write", "advisory": False, "durability": "nondurable"}


def run_of(value: float, *, revision: str = "3f2a9c1d0e5b", **params: Any) -> dict[str, Any]:
    """One page_touch result whose median is ``value`` (its samples spread by ±1 %)."""
    return result_record(
        params={**PARAMS, **params},
        samples=[value * 0.99, value, value * 1.01, value * 0.995, value * 1.005],
        library={"name": "libxac", "version": "0.1.0", "git_revision": revision},
    )


def probe_values(slower_from: int = 13, runs: int = 24, step: float = 0.15) -> list[float]:
    """The issue's probe: the same results every run, every sample ``step`` slower from run
    ``slower_from`` (1-based) on."""
    return [10.0 * (1 + step if i + 1 >= slower_from else 1) for i in range(runs)]


def upload_runs(
    client: HttpClient,
    machine_id: int,
    agent: dict[str, str],
    values: list[float],
    *,
    revisions: list[str] | None = None,
    app: FastAPI | None = None,
    after_each: Any = None,
) -> list[int]:
    """One run per value; with ``app`` the watcher's pass runs after each upload and
    ``after_each(index, run_id)`` is called.  The run ids, oldest first."""
    run_ids = []
    for index, value in enumerate(values):
        revision = revisions[index] if revisions else "3f2a9c1d0e5b"
        run_ids.append(
            store_results(
                client, machine_id, agent, "page-touch", [run_of(value, revision=revision)]
            )
        )
        if app is not None:
            app.state.watcher.run_pass()
            if after_each is not None:
                after_each(index, run_ids[-1])
    return run_ids


def alerts_of(client: HttpClient, machine_id: int, **query: Any) -> list[dict[str, Any]]:
    reply = client.get("/api/v1/alerts", params={"machine_id": machine_id, **query})
    assert reply.status_code == 200, reply.text
    found: list[dict[str, Any]] = reply.json()["alerts"]
    return found


def seed_alert(
    client: HttpClient,
    machine_id: int,
    agent: dict[str, str],
    *,
    text: str = "",
    revision: str = "3f2a9c1d0e5b",
    timeout: float = 60,
) -> int:
    """The probe's 15 % step on a running server (its watcher detects it); the alert's id.
    ``text`` goes into the series' params, to see it escaped on the pages."""
    for value in probe_values(runs=20):
        record = run_of(value, revision=revision, **({"note": text} if text else {}))
        store_results(client, machine_id, agent, "page-touch", [record])
    deadline = time.monotonic() + timeout
    while True:
        found = alerts_of(client, machine_id)
        if found or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert found, "the server's watcher raised no alert"
    alert_id: int = found[0]["id"]
    return alert_id
