"""A real PostgreSQL holding the results of real runs of every suite.

PostgreSQL comes from XACLAB_TEST_PG_URL when `make test` provides one;
otherwise a throw-away cluster is started and stopped at the end
(xaclab_testsupport's ``pg_server_url``).  The data gets there the way a lab's does: the real
xaclab-server on a fresh database, the real xaclab-agent registered with the
registration token, runs created through the user API (the quick profile of
page-touch, storage, search-tree and concurrency, and concurrency again on 4
processes), each claimed, run and uploaded by `xaclab-agent run --once` from
the suites' declarations (docs/agent-protocol.md).

The concurrency suite runs the seeds-004 record workload
(concurrency_records) after Tests A, B and C, so its results come from the
same agent runs.  Two idle machines (one approved with a queued run that
nobody claims, one registered without the token and pending approval) give
the lab dashboard a queue and an approval state to show.
No result is invented, except the change-point probe's (probe_series.py): one
more machine's 20 runs of one page_touch result, 15 % slower from run 13 on,
uploaded through the agent API so the server's detector has a change to find
for the change-point dashboard.
"""

from __future__ import annotations

import platform
from collections.abc import Iterator

import httpx
import pytest
from xaclab_testsupport import REPO as TOP
from xaclab_testsupport import AgentProcess, PgDatabases, ServerProcess, libpq_url
from xaclab_testsupport.fixtures import pg_server_url as pg_server_url

from dashboards.tests.probe_series import seed_probe

MACHINE = "dash-lab-01"
IDLE_MACHINE = "dash-idle-02"
PENDING_MACHINE = "dash-pending-03"


@pytest.fixture(scope="session")
def dash_pg_url(pg_server_url: str) -> Iterator[str]:
    with PgDatabases(pg_server_url, prefix="xaclab_dash_") as databases:
        yield databases.create()


@pytest.fixture(scope="session")
def dash_server(dash_pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    """(base URL, registration token, an admin's API token) of a real server on the fresh database."""
    with ServerProcess(tmp_path_factory.mktemp("dash-server"), database_url=dash_pg_url) as server:
        yield server.base_url, server.registration_token, server.create_admin(api_token="seed")


# Every suite's quick profile; concurrency twice so the speedup curve has a
# third point (procs 1 and 2 from the first run, 4 from the second), and a third
# time with the record database's LIBXAC variant keeping its pages, which the
# record panels must keep apart from pages taken afresh.
RUNS: tuple[tuple[str, dict[str, object]], ...] = (
    ("page-touch", {}),
    ("storage", {}),
    ("search-tree", {}),
    ("concurrency", {}),
    ("concurrency", {"procs": 4, "tests": "A"}),
    ("concurrency", {"tests": "A", "variant": "libxac", "keep_pages": True}),
)
PROGRAMS = ("page_touch", "storage_journal", "tree_insert", "concurrency_test", "concurrency_records")


def _create_run(
    base: str, api_token: str, machine_id: int, suite: str, params: dict[str, object] | None = None
) -> int:
    created = httpx.post(
        f"{base}/api/v1/runs",
        json={"machine_id": machine_id, "suite": suite, "profile": "quick", "params": params or {}},
        headers={"Authorization": f"Bearer {api_token}"},
        timeout=30,
    )
    assert created.status_code == 201, created.text
    run_id: int = created.json()["run_id"]
    return run_id


def _register_idle(agent_api: str, name: str, registration_token: str | None) -> int:
    reply = httpx.post(
        f"{agent_api}/register",
        json={
            "registration_token": registration_token,
            "name": name,
            "fingerprint": {"hostname": name, "kernel": platform.release(), "machine": platform.machine()},
        },
        timeout=30,
    )
    assert reply.status_code in (200, 201, 202), reply.text
    machine_id: int = reply.json()["machine_id"]
    return machine_id


@pytest.fixture(scope="session")
def seeded_db(
    dash_server: tuple[str, str, str], dash_pg_url: str, tmp_path_factory: pytest.TempPathFactory
) -> str:
    """Every suite's quick profile run by the real agent; return the libpq URL."""
    base, registration_token, api_token = dash_server
    for program in (
        "page_touch",
        "storage_journal",
        "tree_insert",
        "concurrency_test",
        "concurrency_records",
    ):
        assert (TOP / "libxac/bin" / program).is_file(), (
            f"libxac/bin/{program} is missing; run `make -C libxac`"
        )
    home = tmp_path_factory.mktemp("dash-agent")
    token_file = home / "registration-token"
    token_file.write_text(registration_token + "\n")
    agent = AgentProcess(
        home, suites_dir=TOP / "contracts/suites", env={"XACLAB_AGENT_PROGRESS_INTERVAL": "0"}
    )
    registered = agent.run(
        "register",
        "--server",
        base,
        "--name",
        MACHINE,
        "--registration-token-file",
        str(token_file),
        timeout=120,
    )
    assert registered.returncode == 0, registered.stderr
    machines = httpx.get(f"{base}/api/v1/machines", timeout=30).json()
    (machine_id,) = [m["id"] for m in machines if m["name"] == MACHINE]

    for suite, params in RUNS:
        run_id = _create_run(base, api_token, machine_id, suite, params)
        done = agent.run("run", "--once", "--wait", "5", timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        run = httpx.get(f"{base}/api/v1/runs/{run_id}", timeout=30).json()
        assert run["status"] == "succeeded", run

    agent_api = f"{base}/api/agent/v1"
    idle = _register_idle(agent_api, IDLE_MACHINE, registration_token)
    _create_run(base, api_token, idle, "page-touch")
    _register_idle(agent_api, PENDING_MACHINE, None)
    seed_probe(base, registration_token, api_token)
    return libpq_url(dash_pg_url)
