"""A page-touch run from the HTTP API to the run page and the database.

Real parts only: a real PostgreSQL, the real server process, the real agent
process, and the real libxac/bin/page_touch --quick.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import httpx
import psycopg

from tests.conftest import TOP, VENV_BIN, Server, libpq

N_VALUES = [1 << k for k in range(11)]  # 1 … 1024, the thesis's range


def agent_env(server: Server, state: Path) -> dict[str, str]:
    return dict(
        os.environ,
        XACLAB_AGENT_SERVER=server.base,
        XACLAB_AGENT_STATE_DIR=str(state),
        XACLAB_AGENT_BIN_DIR=str(TOP / "libxac" / "bin"),
        XACLAB_REGISTRATION_TOKEN=server.registration_token,
    )


def test_page_touch_run_end_to_end(server: Server, tmp_path: Path) -> None:
    env = agent_env(server, tmp_path / "agent")
    subprocess.run(
        [str(VENV_BIN / "xaclab-agent"), "register", "--server", server.base, "--name", "e2e-lab-01"],
        env=env,
        check=True,
        capture_output=True,
    )
    machines = httpx.get(f"{server.base}/api/v1/machines").json()
    machine = next(m for m in machines if m["name"] == "e2e-lab-01")
    # The server's comparability hash is the one the real agent computes for
    # this machine (both read contracts/fingerprint-fields.json).
    printed = subprocess.run(
        [str(VENV_BIN / "xaclab-agent"), "fingerprint"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    assert machine["fingerprint_hash"] == json.loads(printed.stdout)["fingerprint_hash"]

    created = httpx.post(
        f"{server.base}/api/v1/runs",
        json={"machine_id": machine["id"], "suite": "page-touch", "profile": "quick", "params": {}},
        headers=server.auth,
    )
    assert created.status_code == 201, created.text
    run_id = created.json()["run_id"]

    agent = subprocess.run(
        [str(VENV_BIN / "xaclab-agent"), "run", "--once"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert agent.returncode == 0, agent.stderr

    deadline = time.monotonic() + 30
    while True:
        run = httpx.get(f"{server.base}/api/v1/runs/{run_id}").json()
        if run["status"] in ("succeeded", "failed") or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert run["status"] == "succeeded", run

    results = httpx.get(f"{server.base}/api/v1/runs/{run_id}/results").json()
    touch = [r for r in results if r["benchmark"] == "page_touch"]
    # Every (n, access, advisory) cell of the thesis's experiment is present.
    cells = {(r["params"]["n"], r["params"]["access"], r["params"]["advisory"]) for r in touch}
    assert cells == {(n, a, adv) for n in N_VALUES for a in ("read", "write") for adv in (False, True)}
    for r in touch:
        assert r["unit"] == "us" and r["metric"] == "time_per_page"
        assert 0 < r["min"] <= r["median"] <= r["max"]
    floors = {r["benchmark"] for r in results if r["sut"] == "os"}
    assert floors, "the run must measure the SIGSEGV/mprotect floor beside libxac"

    page = httpx.get(f"{server.base}/runs/{run_id}")
    assert page.status_code == 200
    assert "page-touch" in page.text

    with psycopg.connect(libpq(server.database_url)) as conn:
        stored = conn.execute(
            "SELECT count(*), count(DISTINCT machine_id), min(n) FROM results WHERE run_id = %s",
            (run_id,),
        ).fetchone()
        fingerprint = conn.execute(
            "SELECT env FROM results WHERE run_id = %s AND benchmark = 'page_touch' LIMIT 1", (run_id,)
        ).fetchone()
    assert stored is not None and stored[0] == len(results) and stored[1] == 1 and stored[2] >= 1
    assert fingerprint is not None and fingerprint[0], "the agent must attach the machine fingerprint"
