"""The agent over TLS against the real server: it talks to a server whose certificate its
ca_file vouches for, and refuses, with a sentence and nothing sent, one it does not."""

from __future__ import annotations

import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from xaclab_testsupport import AgentProcess, ServerProcess
from xaclab_testsupport.tls import CertAuthority, issue, make_ca

from xaclab_agent.client import AgentClient, RetryPolicy
from xaclab_agent.errors import ConfigError, UntrustedServerError


@pytest.fixture
def lab_ca(tmp_path: Path) -> CertAuthority:
    return make_ca(tmp_path / "lab-ca", "lab CA")


@pytest.fixture
def https_server(tmp_path: Path, lab_ca: CertAuthority) -> Iterator[ServerProcess]:
    cert, key = issue(lab_ca, tmp_path / "tls", name="server")
    server = ServerProcess(
        tmp_path / "data",
        registration_token=secrets.token_hex(16),
        env={"XACLAB_ENV": "test", "XACLAB_SCHEDULER_SECONDS": "0"},
        tls=(cert, key, lab_ca.cert),
    )
    with server:
        yield server


def register(
    server: ServerProcess, home: Path, ca_file: Path | None
) -> subprocess.CompletedProcess[str]:
    agent = AgentProcess(
        home,
        server_url=server.base_url,
        registration_token=server.registration_token,
        env={"XACLAB_AGENT_CA_FILE": str(ca_file)} if ca_file else {},
    )
    return subprocess.run(
        [sys.executable, "-m", "xaclab_agent.cli", "register", "--name", home.name],
        env=agent.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def machines(server: ServerProcess) -> list[str]:
    reply = httpx.get(f"{server.base_url}/api/v1/machines", verify=server.trust)
    return [m["name"] for m in reply.json()]


def test_the_agent_registers_with_a_server_its_lab_ca_vouches_for(
    https_server: ServerProcess, lab_ca: CertAuthority, tmp_path: Path
) -> None:
    done = register(https_server, tmp_path / "lab-01", lab_ca.cert)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "lab-01" / "state" / "agent-token").is_file()
    assert machines(https_server) == ["lab-01"]


def test_the_agent_refuses_a_server_its_ca_file_does_not_vouch_for(
    https_server: ServerProcess, tmp_path: Path
) -> None:
    other = make_ca(tmp_path / "other-ca", "other CA")
    done = register(https_server, tmp_path / "lab-02", other.cert)
    assert done.returncode == 2, done.stderr
    assert (
        f"The server {https_server.base_url} presented a certificate that the CA file "
        f"{other.cert} does not vouch for (unable to get local issuer certificate); the agent "
        "refuses to talk to it." in done.stderr
    )
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "lab-02" / "state" / "agent-token").exists()
    assert machines(https_server) == []


def test_without_a_ca_file_the_system_cas_do_not_vouch_for_a_lab_certificate(
    https_server: ServerProcess, tmp_path: Path
) -> None:
    done = register(https_server, tmp_path / "lab-03", None)
    assert done.returncode == 2
    assert "the system's trusted CAs does not vouch for" in done.stderr


def test_a_certificate_for_another_name_is_refused_and_never_retried(
    lab_ca: CertAuthority, tmp_path: Path
) -> None:
    cert, key = issue(lab_ca, tmp_path / "tls", name="elsewhere", sans=("elsewhere.example",))
    server = ServerProcess(
        tmp_path / "data", env={"XACLAB_ENV": "test"}, tls=(cert, key, lab_ca.cert)
    )
    server.trust = False  # this test's own wait must not check the name either
    sleeps: list[float] = []
    with (
        server,
        AgentClient(
            server.base_url, ca_file=lab_ca.cert, retry=RetryPolicy(attempts=5), sleep=sleeps.append
        ) as client,
    ):
        with pytest.raises(UntrustedServerError, match="IP address mismatch"):
            client.register(registration_token="x" * 20, name="lab-04", fingerprint={})
    assert sleeps == []


def test_a_ca_file_that_is_not_pem_is_a_configuration_error(tmp_path: Path) -> None:
    bad = tmp_path / "ca.crt"
    bad.write_text("not a certificate\n")
    with pytest.raises(ConfigError, match="does not load as a PEM file of CA certificates"):
        AgentClient("https://127.0.0.1:9", ca_file=bad)
