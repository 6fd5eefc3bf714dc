"""The real agent registers with the real server; its daemon stops by PID."""

from pathlib import Path

import httpx
import pytest

from xaclab_testsupport import AgentProcess, ProcessFailed, ServerProcess


def test_the_agent_registers_and_its_daemon_runs_until_stopped(tmp_path: Path) -> None:
    with ServerProcess(tmp_path / "server", env={"XACLAB_ENV": "test"}) as server:
        agent = AgentProcess(
            tmp_path / "agent",
            server_url=server.base_url,
            registration_token=server.registration_token,
        )
        agent.register("ts-lab")
        assert (agent.state_dir / "agent-token").exists()
        machines = httpx.get(f"{server.base_url}/api/v1/machines").json()
        assert [m["name"] for m in machines] == ["ts-lab"]
        with agent:
            assert agent.poll() is None
        assert agent.poll() is not None


def test_a_refused_registration_raises_with_the_agents_words(tmp_path: Path) -> None:
    with ServerProcess(tmp_path / "server", env={"XACLAB_ENV": "test"}) as server:
        agent = AgentProcess(
            tmp_path / "agent", server_url=server.base_url, registration_token="not-the-token-0123"
        )
        with pytest.raises(ProcessFailed, match="xaclab-agent register failed"):
            agent.register("ts-lab")
