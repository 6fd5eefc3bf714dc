from __future__ import annotations

import functools
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from xaclab_agent import cli
from xaclab_agent.client import AgentClient


@pytest.fixture
def env(lab: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XACLAB_AGENT_CONFIG", str(tmp_path / "absent.toml"))
    (tmp_path / "absent.toml").write_text("")
    monkeypatch.setenv("XACLAB_AGENT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XACLAB_AGENT_BIN_DIR", str(lab.bin_dir))
    monkeypatch.setenv("XACLAB_AGENT_WORK_DIR", str(lab.work_dir))
    monkeypatch.setenv("XACLAB_AGENT_SUITES_DIR", str(lab.suites_dir))
    return tmp_path / "state"


@pytest.fixture
def mock_server(server: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    patched = functools.partial(AgentClient, transport=server.transport())
    monkeypatch.setattr(cli, "AgentClient", patched)
    return server


def test_bench_prints_result_lines(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["bench", "--suite", "fake", "--profile", "quick", "--param", "repetitions=3"])
    out, err = capsys.readouterr()
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 2 and all("fingerprint_hash" in r["env"] for r in lines)
    assert lines[0]["params"]["argv"] == "--quick --reps 3"
    assert "[ 50.0%] step 0" in err and "diagnostic: hello" in err


@pytest.mark.parametrize("param", ["repetitions=$(id)", "access=; rm -rf /", "bogus=1"])
def test_bench_refuses_bad_params(env: Path, lab: Any, param: str) -> None:
    assert cli.main(["bench", "--suite", "fake", "--param", param]) == 2
    assert lab.runs() == []


def test_bench_failure_exit_code(env: Path, lab: Any, capsys: pytest.CaptureFixture[str]) -> None:
    lab.set_mode("fail")
    assert cli.main(["bench", "--suite", "fake"]) == 1
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_fingerprint_command(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["fingerprint"]) == 0
    assert json.loads(capsys.readouterr().out)["fingerprint_hash"].startswith("sha256:")


def test_register_then_run_once(
    env: Path, mock_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token_file = tmp_path / "reg-token"
    token_file.write_text("secret\n")
    code = cli.main(
        [
            "register",
            "--server",
            "http://agent.test",
            "--name",
            "lab-01",
            "--registration-token-file",
            str(token_file),
        ]
    )
    assert code == 0
    token = env / "agent-token"
    assert token.read_text().strip() == "xa_test"
    assert stat.S_IMODE(token.stat().st_mode) == 0o600
    mock_server.jobs.append(
        {"job_id": 5, "run_id": 1, "suite": "fake", "profile": "quick", "params": {}}
    )
    assert cli.main(["run", "--once", "--wait", "0"]) == 0
    assert mock_server.finished[5]["status"] == "succeeded"


def test_register_needs_a_token(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XACLAB_REGISTRATION_TOKEN", raising=False)
    assert cli.main(["register", "--server", "http://agent.test"]) == 2


def test_register_refuses_bad_name(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XACLAB_REGISTRATION_TOKEN", "secret")
    assert cli.main(["register", "--server", "http://x", "--name", "bad name"]) == 2


def test_run_unregistered(env: Path) -> None:
    assert cli.main(["run", "--once"]) == 2


def test_revoked_token_exits_3(
    env: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XACLAB_REGISTRATION_TOKEN", "secret")
    assert cli.main(["register", "--server", "http://agent.test", "--name", "lab-01"]) == 0
    mock_server.token = "rotated"
    assert cli.main(["run", "--once", "--wait", "0"]) == 3


def test_doctor_speaks_in_sentences(
    env: Path, lab: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    before = set(os.listdir("."))
    code = cli.main(["doctor"])
    out = capsys.readouterr().out
    assert set(os.listdir(".")) == before, "doctor ran a program in the caller's directory"
    assert code == 1, "not registered, so at least one problem"
    assert "not registered" in out and "programs are present and run" in out
    assert all(line.startswith(("ok", "PROBLEM")) for line in out.splitlines())
