"""make demo: start a server and a local agent, queue a quick page-touch run.

Everything lives under .demo/ (SQLite database, agent state, a generated
registration token, the generated admin password in .demo/admin-password and
an API token in .demo/api-token).  Ctrl-C stops the two processes this script
started, by their PIDs, and nothing else.  Both are xaclab_testsupport's
processes, the ones the tests start.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import sys
import time

import httpx
from xaclab_testsupport import REPO, AgentProcess, ProcessFailed, ServerProcess, port_is_free

DEMO = REPO / ".demo"


def say(text: str) -> None:
    sys.stderr.write(f"demo: {text}\n")
    sys.stderr.flush()


def secret_file(name: str) -> tuple[str, bool]:
    """The secret kept in .demo/<name>, made on first use; (secret, newly made)."""
    path = DEMO / name
    if path.exists():
        return path.read_text().strip(), False
    value = secrets.token_urlsafe(18)
    path.write_text(value + "\n")
    path.chmod(0o600)
    return value, True


def registration_token() -> str:
    path = DEMO / "registration-token"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(32) + "\n")
        path.chmod(0o600)
    return path.read_text().strip()


def admin_api_token(server: ServerProcess) -> str:
    """The demo admin's API token: the admin (and token) are made on the first demo only."""
    token_path = DEMO / "api-token"
    password, new = secret_file("admin-password")
    if new or not token_path.exists():
        try:
            token = server.create_admin("admin", password=password, api_token="demo")
        except ProcessFailed as error:
            raise SystemExit(
                f"demo: could not create the admin: {error} (remove {DEMO} to start the demo afresh)"
            ) from None
        token_path.write_text(token + "\n")
        token_path.chmod(0o600)
    return token_path.read_text().strip()


def main() -> int:
    port = int(os.environ.get("PORT", "8000"))
    if not port_is_free(port):
        raise SystemExit(f"demo: port {port} on 127.0.0.1 is in use; run with PORT=<another port>")
    DEMO.mkdir(exist_ok=True)
    # The caller's XACLAB_* settings (a database URL, say) reach both processes.
    server = ServerProcess(DEMO, port=port, registration_token=registration_token(), inherit_xaclab_env=True)
    base = server.base_url
    auth = {"Authorization": f"Bearer {admin_api_token(server)}"}
    agent = AgentProcess(
        DEMO,
        server_url=base,
        registration_token=server.registration_token,
        state_dir=DEMO / "agent",
        inherit_xaclab_env=True,
    )

    def stop(*_: object) -> None:
        agent.stop()
        server.stop()
        raise SystemExit(0)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)

    say(f"server starting on {base} (log: .demo/server.log)")
    try:
        server.start()
        name = socket.gethostname().split(".")[0] or "demo"
        agent.register(name)
    except ProcessFailed as error:
        server.stop()
        raise SystemExit(f"demo: {error}") from None
    agent.start()
    say("agent started (log: .demo/agent.log)")

    machines = httpx.get(f"{base}/api/v1/machines", timeout=10).json()
    machine = next(m for m in machines if m["name"] == name)
    reply = httpx.post(
        f"{base}/api/v1/runs",
        json={"machine_id": machine["id"], "suite": "page-touch", "profile": "quick", "params": {}},
        headers=auth,
        timeout=10,
    )
    reply.raise_for_status()
    run_id = reply.json()["run_id"]
    sys.stdout.write(f"\nOpen {base}/runs/{run_id} to watch the page-touch run.\n")
    password = (DEMO / "admin-password").read_text().strip()
    sys.stdout.write(f"Log in as admin with the password {password} (kept in .demo/admin-password).\n")
    sys.stdout.write(f"Machines: {base}/   New run: {base}/runs/new   Press Ctrl-C to stop.\n\n")
    sys.stdout.flush()

    while True:
        for child in (server, agent):
            if child.poll() is not None:
                say(f"a process exited with code {child.poll()}; stopping (logs in .demo/)")
                stop()
        time.sleep(1)


if __name__ == "__main__":
    sys.exit(main())
