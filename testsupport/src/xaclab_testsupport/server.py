"""The real server, ``xaclab-server``, as a child process on 127.0.0.1."""

import secrets
import ssl
from collections.abc import Mapping
from pathlib import Path

from xaclab_testsupport.paths import VENV_BIN
from xaclab_testsupport.ports import LOOPBACK, free_port
from xaclab_testsupport.processes import (
    ChildProcess,
    ProcessFailed,
    checked,
    environment,
    run_command,
    wait_until_answers,
)


class ServerProcess(ChildProcess):
    """``xaclab-server`` on ``database_url`` (None: the SQLite file in ``data_dir``),
    on a free loopback port unless ``port`` is given; its output in ``log_path``
    (default ``data_dir/server.log``).  :meth:`start` returns once ``/healthz``
    answers and raises :class:`ProcessFailed` with the log's tail when it does not.

    The child gets this process's environment without its ``XACLAB_*`` settings
    (unless ``inherit_xaclab_env``), then ``XACLAB_DATA_DIR``,
    ``XACLAB_REGISTRATION_TOKEN`` (a random one unless given),
    ``XACLAB_DATABASE_URL`` when given, then ``env``.  With ``tls`` (a certificate
    for 127.0.0.1, its key and its CA's certificate, from
    :mod:`xaclab_testsupport.tls`) it serves HTTPS, ``base_url`` is https:// and
    ``trust`` is the context that trusts that CA.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        database_url: str | None = None,
        registration_token: str | None = None,
        env: Mapping[str, str] | None = None,
        log_path: Path | None = None,
        port: int | None = None,
        inherit_xaclab_env: bool = False,
        tls: tuple[Path, Path, Path] | None = None,
    ) -> None:
        super().__init__(log_path or data_dir / "server.log")
        self.data_dir = data_dir
        self.port = port or free_port()
        self.base_url = f"{'https' if tls else 'http'}://{LOOPBACK}:{self.port}"
        self.trust: ssl.SSLContext | bool = True
        self.registration_token = registration_token or secrets.token_urlsafe(24)
        self.env = environment(inherit_xaclab=inherit_xaclab_env)
        self.env["XACLAB_DATA_DIR"] = str(data_dir)
        self.env["XACLAB_REGISTRATION_TOKEN"] = self.registration_token
        if database_url is not None:
            self.env["XACLAB_DATABASE_URL"] = database_url
        if tls is not None:
            cert, key, ca = tls
            self.env.update(XACLAB_TLS_CERT_FILE=str(cert), XACLAB_TLS_KEY_FILE=str(key))
            self.trust = ssl.create_default_context(cafile=str(ca))
        self.env.update(env or {})

    def start(self, timeout: float = 60) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        argv = [str(VENV_BIN / "xaclab-server"), "--host", LOOPBACK, "--port", str(self.port)]
        process = self.spawn(argv, env=self.env, cwd=self.data_dir)
        try:
            wait_until_answers(
                process,
                f"{self.base_url}/healthz",
                what="xaclab-server",
                log=self.log_path,
                timeout=timeout,
                verify=self.trust,
            )
        except ProcessFailed:
            self.stop()
            raise

    def create_admin(
        self, username: str = "admin", *, password: str | None = None, api_token: str | None = "tests"
    ) -> str:
        """``xaclab-server create-admin`` on this server's database, the way a lab
        makes its first admin (the server need not run); returns the API token
        it printed, or "" when ``api_token`` (the token's name) is None."""
        argv = [str(VENV_BIN / "xaclab-server"), "create-admin", "--username", username]
        if api_token is not None:
            argv += ["--api-token", api_token]
        self.data_dir.mkdir(parents=True, exist_ok=True)
        env = dict(self.env, XACLAB_ADMIN_PASSWORD=password or secrets.token_urlsafe(18))
        return checked(run_command(argv, env=env, cwd=self.data_dir), "xaclab-server create-admin")
