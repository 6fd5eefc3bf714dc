"""The agent against the real xaclab server (SQLite in a temp dir), both as subprocesses."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from xaclab_testsupport import AgentProcess, ServerProcess

# The server is part of the same checkout and `make test` installs it: its
# absence is a broken environment, not a reason to skip.
assert importlib.util.find_spec("xaclab_server") is not None, "xaclab-server is not installed"


@dataclass
class Lab:
    url: str
    agent_env: dict[str, str]
    token_file: Path
    state_dir: Path
    # An admin's API token: the user API refuses anonymous writes.
    headers: dict[str, str]


def _agent(lab: Lab, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "xaclab_agent.cli", *args],
        env=lab.agent_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def real(lab: Any, tmp_path: Path) -> Iterator[Lab]:
    server = ServerProcess(
        tmp_path / "data",
        registration_token=secrets.token_hex(16),
        env={"XACLAB_ENV": "test", "XACLAB_SUITES_DIR": str(lab.suites_dir)},
        log_path=tmp_path / "server.log",
    )
    with server:
        headers = {"Authorization": f"Bearer {server.create_admin()}"}
        token_file = tmp_path / "registration-token"
        token_file.write_text(server.registration_token + "\n")
        agent = AgentProcess(
            tmp_path,
            bin_dir=lab.bin_dir,
            suites_dir=lab.suites_dir,
            work_dir=lab.work_dir,
            env={"XACLAB_AGENT_PROGRESS_INTERVAL": "0"},
        )
        yield Lab(server.base_url, agent.env, token_file, agent.state_dir, headers)


def _register(real: Lab) -> int:
    done = _agent(
        real,
        "register",
        "--server",
        real.url,
        "--name",
        "lab-01",
        "--registration-token-file",
        str(real.token_file),
    )
    assert done.returncode == 0, done.stderr
    machines = httpx.get(f"{real.url}/api/v1/machines").json()
    (machine,) = [m for m in machines if m["name"] == "lab-01"]
    machine_id: int = machine["id"]
    return machine_id


def test_register_and_run_once(real: Lab) -> None:
    machine_id = _register(real)
    assert (real.state_dir / "agent-token").stat().st_mode & 0o777 == 0o600
    created = httpx.post(
        headers=real.headers,
        url=f"{real.url}/api/v1/runs",
        json={
            "machine_id": machine_id,
            "suite": "fake",
            "profile": "quick",
            "params": {"repetitions": 2, "access": "write"},
        },
    )
    assert created.status_code == 201, created.text
    run_id = created.json()["run_id"]

    done = _agent(real, "run", "--once", "--wait", "5")
    assert done.returncode == 0, done.stderr

    run = httpx.get(f"{real.url}/api/v1/runs/{run_id}").json()
    assert run["jobs"][0]["status"] == "succeeded", run
    assert run["jobs"][0]["message"] == "2 results"
    results = httpx.get(f"{real.url}/api/v1/runs/{run_id}/results").json()
    assert len(results) == 2 and results[0]["n"] == 3
    assert list((real.state_dir / "spool").glob("*.json")) == []


def test_failing_program_is_reported(real: Lab, lab: Any) -> None:
    machine_id = _register(real)
    lab.set_mode("fail")
    created = httpx.post(
        headers=real.headers,
        url=f"{real.url}/api/v1/runs",
        json={"machine_id": machine_id, "suite": "fake", "profile": "quick", "params": {}},
    )
    run_id = created.json()["run_id"]
    assert _agent(real, "run", "--once", "--wait", "5").returncode == 0
    job = httpx.get(f"{real.url}/api/v1/runs/{run_id}").json()["jobs"][0]
    assert job["status"] == "failed" and "status 3" in job["message"]
    assert len(httpx.get(f"{real.url}/api/v1/runs/{run_id}/results").json()) == 2


def test_sigterm_while_polling_exits_cleanly(real: Lab) -> None:
    _register(real)
    proc = subprocess.Popen(
        [sys.executable, "-m", "xaclab_agent.cli", "run", "--wait", "4"],
        env=real.agent_env,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(2)
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    assert proc.returncode == 0, err


def _queue(real: Lab, machine_id: int, params: dict[str, Any]) -> dict[str, Any]:
    created = httpx.post(
        headers=real.headers,
        url=f"{real.url}/api/v1/runs",
        json={"machine_id": machine_id, "suite": "fake", "profile": "quick", "params": params},
    )
    assert created.status_code == 201, created.text
    body: dict[str, Any] = created.json()
    return body


def _wait_for(predicate: Any, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_cancel_from_the_server_stops_the_job_and_logs_arrive(real: Lab, lab: Any) -> None:
    machine_id = _register(real)
    lab.set_mode("sleep")
    run = _queue(real, machine_id, {})
    job_id = run["job_ids"][0]
    env = dict(real.agent_env, XACLAB_AGENT_HEARTBEAT_INTERVAL="0.3")
    proc = subprocess.Popen(
        [sys.executable, "-m", "xaclab_agent.cli", "run", "--once", "--wait", "5"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(lambda: len(lab.runs()) == 1, "the program to start")
        assert (
            httpx.post(f"{real.url}/api/v1/jobs/{job_id}/cancel", headers=real.headers).status_code
            == 200
        )
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    job = httpx.get(f"{real.url}/api/v1/runs/{run['run_id']}").json()["jobs"][0]
    assert job["status"] == "cancelled" and "cancelled on the server" in job["message"]
    logs = httpx.get(f"{real.url}/api/v1/jobs/{job_id}/logs").json()
    assert "diagnostic: hello" in "".join(c["text"] for c in logs)


def test_agent_killed_mid_job_restores_write_cache_at_restart(
    real: Lab, lab: Any, tmp_path: Path, loop_device: Any
) -> None:
    """SIGKILL while the program runs with write_cache=off: at the next start the journal is
    replayed (write cache back on) before the job is claimed again; no result is lost or
    duplicated."""
    machine_id = _register(real)
    with loop_device(tmp_path / "disk") as loop:
        lab.watch_write_cache(loop.write_cache_path)
        lab.set_mode("sleep")
        run = _queue(real, machine_id, {"write_cache": "off", "target_dir": str(loop.mount_point)})
        env = dict(real.agent_env, XACLAB_AGENT_ALLOWED_DIRS=str(loop.mount_point))
        proc = subprocess.Popen(
            [sys.executable, "-m", "xaclab_agent.cli", "run", "--wait", "2"],
            env=env,
            stderr=subprocess.DEVNULL,
        )
        try:
            child_file = real.state_dir / "running-program.json"
            _wait_for(child_file.exists, "the program to start")

            def sleeping() -> bool:  # it printed everything: now a kill cannot break its pipe
                run_now = httpx.get(f"{real.url}/api/v1/runs/{run['run_id']}").json()
                return bool(run_now["jobs"][0]["progress"] == 1.0)

            _wait_for(sleeping, "the program to reach its sleep")
            assert loop.write_cache() == "write through"
            orphan = json.loads(child_file.read_text())["pid"]
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert (real.state_dir / "write-cache-journal.json").exists()
        assert loop.write_cache() == "write through", "nobody restored it yet"

        lab.set_mode("ok")
        done = _agent(dataclasses.replace(real, agent_env=env), "run", "--once", "--wait", "5")
        assert done.returncode == 0, done.stderr
        assert "found a write-cache journal" in done.stderr
        assert f"killed program {orphan}" in done.stderr
        assert not Path(f"/proc/{orphan}").exists() or _is_zombie(orphan)
        assert loop.write_cache() == "write back"
        assert not (real.state_dir / "write-cache-journal.json").exists()

        job = httpx.get(f"{real.url}/api/v1/runs/{run['run_id']}").json()["jobs"][0]
        assert job["status"] == "succeeded", job
        results = httpx.get(f"{real.url}/api/v1/runs/{run['run_id']}/results").json()
        assert len(results) == 2, "the killed attempt left nothing, the rerun stored once"
        assert {r["params"]["write_cache"] for r in results} == {"off"}
        assert {r["params"]["wc_seen"] for r in results} == {"write through"}


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] == "Z"
    except OSError:
        return True
