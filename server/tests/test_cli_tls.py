"""The console script serves HTTPS with a certificate, and plain HTTP off loopback only when
told to (with a warning)."""

import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from xaclab_testsupport import ServerProcess
from xaclab_testsupport.tls import issue, make_ca

from tests.test_cli import run_cli

TOKEN = "a-long-random-token-for-tests"


def test_plain_http_off_loopback_is_refused_without_the_opt_out(tmp_path: Path) -> None:
    done = run_cli(
        {"XACLAB_REGISTRATION_TOKEN": TOKEN, "XACLAB_DATA_DIR": str(tmp_path)},
        "--host",
        "0.0.0.0",
        "--migrate-only",
    )
    assert done.returncode == 2
    assert "--host 0.0.0.0 is not a loopback address and no TLS certificate is set" in done.stderr
    assert "XACLAB_ALLOW_PLAIN_HTTP=true" in done.stderr
    assert not (tmp_path / "xaclab.sqlite3").exists()  # refused before touching anything


def test_the_opt_out_serves_plain_http_with_a_warning(tmp_path: Path) -> None:
    done = run_cli(
        {
            "XACLAB_REGISTRATION_TOKEN": TOKEN,
            "XACLAB_DATA_DIR": str(tmp_path),
            "XACLAB_ALLOW_PLAIN_HTTP": "true",
            "XACLAB_LOG_FORMAT": "text",
        },
        "--host",
        "0.0.0.0",
        "--migrate-only",
    )
    assert done.returncode == 0, done.stderr
    assert "WARNING" in done.stderr and "serving plain HTTP on 0.0.0.0" in done.stderr


def test_loopback_serves_plain_http_without_a_word(tmp_path: Path) -> None:
    done = run_cli(
        {"XACLAB_REGISTRATION_TOKEN": TOKEN, "XACLAB_DATA_DIR": str(tmp_path)},
        "--host",
        "127.0.0.1",
        "--migrate-only",
    )
    assert done.returncode == 0 and "plain HTTP" not in done.stderr


def test_tls_files_that_do_not_load_are_refused(tmp_path: Path) -> None:
    (tmp_path / "cert.pem").write_text("not a certificate\n")
    done = run_cli(
        {
            "XACLAB_REGISTRATION_TOKEN": TOKEN,
            "XACLAB_DATA_DIR": str(tmp_path),
            "XACLAB_TLS_CERT_FILE": str(tmp_path / "cert.pem"),
            "XACLAB_TLS_KEY_FILE": str(tmp_path / "missing.pem"),
        },
        "--migrate-only",
    )
    assert done.returncode == 2
    assert "do not load as a certificate and its key" in done.stderr


def test_a_certificate_without_its_key_is_refused(tmp_path: Path) -> None:
    done = run_cli(
        {
            "XACLAB_REGISTRATION_TOKEN": TOKEN,
            "XACLAB_DATA_DIR": str(tmp_path),
            "XACLAB_TLS_CERT_FILE": str(tmp_path / "cert.pem"),
        },
        "--migrate-only",
    )
    assert done.returncode == 2
    assert "XACLAB_TLS_CERT_FILE and XACLAB_TLS_KEY_FILE go together" in done.stderr


@pytest.fixture
def https_server(tmp_path: Path) -> Iterator[tuple[str, ssl.SSLContext]]:
    """The server on 127.0.0.1 with a certificate from a CA of the test's own."""
    ca = make_ca(tmp_path / "ca")
    cert, key = issue(ca, tmp_path / "tls", name="server")
    server = ServerProcess(
        tmp_path / "data",
        registration_token=TOKEN,
        env={"XACLAB_SCHEDULER_SECONDS": "0"},
        tls=(cert, key, ca.cert),
    )
    with server:
        assert isinstance(server.trust, ssl.SSLContext)
        yield server.base_url.removeprefix("https://"), server.trust


def test_the_server_serves_https_with_its_certificate(
    https_server: tuple[str, ssl.SSLContext],
) -> None:
    where, trusting = https_server
    with httpx.Client(verify=trusting, base_url=f"https://{where}") as client:
        assert client.get("/healthz").json()["status"] == "ok"
        # Cookies are Secure under TLS (here the login form's CSRF cookie).
        assert "secure" in client.get("/login").headers["set-cookie"].lower()
    # Plain HTTP to the TLS port gets no answer from the application.
    with pytest.raises(httpx.TransportError):
        httpx.get(f"http://{where}/healthz", timeout=5)
    # A client that does not trust the CA refuses the server.
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        httpx.get(f"https://{where}/healthz", verify=ssl.create_default_context())
