"""The real server started, used, stopped; and one that cannot start."""

from pathlib import Path

import httpx
import pytest

from xaclab_testsupport import ProcessFailed, ServerProcess, port_is_free


def test_a_server_answers_until_stopped(tmp_path: Path) -> None:
    with ServerProcess(tmp_path / "data", env={"XACLAB_ENV": "test"}) as server:
        assert httpx.get(f"{server.base_url}/healthz").json()["status"] == "ok"
        token = server.create_admin("ts-admin")
        me = httpx.get(f"{server.base_url}/api/v1/me", headers={"Authorization": f"Bearer {token}"})
        assert me.json()["username"] == "ts-admin"
        assert (tmp_path / "data" / "xaclab.sqlite3").exists()
    assert server.poll() is not None
    assert port_is_free(server.port)


def test_a_server_that_cannot_start_raises_with_its_log(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, env={"XACLAB_ENV": "test", "XACLAB_CLAIM_POLL_SECONDS": "often"})
    with pytest.raises(ProcessFailed, match=r"(?s)exited with code .*claim_poll_seconds"):
        server.start()
    assert server.poll() is not None
    assert "claim_poll_seconds" in server.log_path.read_text()


def test_a_refused_admin_raises_with_the_reason(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, env={"XACLAB_ENV": "test"})
    server.create_admin("twice", api_token=None)
    with pytest.raises(ProcessFailed, match="create-admin failed"):
        server.create_admin("twice", api_token=None)
