"""make demo: start a server and a local agent, queue a quick page-touch run.

Everything lives under .demo/ (SQLite database, agent state, a generated
registration token, the generated admin password in .demo/admin-password and
an API token in .demo/api-token).  Ctrl-C stops the two processes this script
started, by their PIDs, and nothing else.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

TOP = Path(__file__).resolve().parent.parent
DEMO = TOP / ".demo"
VENV = TOP / ".venv" / "bin"


def say(text: str) -> None:
    sys.stderr.write(f"demo: {text}\n")
    sys.stderr.flush()


def port_is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def registration_token() -> str:
    path = DEMO / "registration-token"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(32) + "\n")
        path.chmod(0o600)
    return path.read_text().strip()


def secret_file(name: str) -> tuple[str, bool]:
    """The secret kept in .demo/<name>, made on first use; (secret, newly made)."""
    path = DEMO / name
    if path.exists():
        return path.read_text().strip(), False
    value = secrets.token_urlsafe(18)
    path.write_text(value + "\n")
    path.chmod(0o600)
    return value, True


def admin_api_token(env: dict[str, str]) -> str:
    """The demo admin's API token: the admin (and token) are made on the first demo only."""
    token_path = DEMO / "api-token"
    password, new = secret_file("admin-password")
    if new or not token_path.exists():
        made = subprocess.run(
            [str(VENV / "xaclab-server"), "create-admin", "--username", "admin", "--api-token", "demo"],
            env=dict(env, XACLAB_ADMIN_PASSWORD=password),
            capture_output=True,
            text=True,
        )
        if made.returncode != 0:
            raise SystemExit(
                f"demo: could not create the admin: {made.stderr.strip()} "
                f"(remove {DEMO} to start the demo afresh)"
            )
        token_path.write_text(made.stdout.strip() + "\n")
        token_path.chmod(0o600)
    return token_path.read_text().strip()


def wait_healthy(base: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"demo: the server exited with code {server.returncode}; see {DEMO}/server.log")
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise SystemExit("demo: the server did not answer /healthz within 60 s")


def main() -> int:
    port = int(os.environ.get("PORT", "8000"))
    if not port_is_free(port):
        raise SystemExit(f"demo: port {port} on 127.0.0.1 is in use; run with PORT=<another port>")
    DEMO.mkdir(exist_ok=True)
    token = registration_token()
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, XACLAB_DATA_DIR=str(DEMO), XACLAB_REGISTRATION_TOKEN=token)

    api_token = admin_api_token(env)
    auth = {"Authorization": f"Bearer {api_token}"}
    children: list[subprocess.Popen[bytes]] = []

    def stop(*_: object) -> None:
        for child in reversed(children):
            if child.poll() is None:
                child.terminate()
        for child in children:
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
        raise SystemExit(0)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)

    with open(DEMO / "server.log", "ab") as log:
        server = subprocess.Popen(
            [str(VENV / "xaclab-server"), "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=log,
            stderr=log,
        )
    children.append(server)
    say(f"server starting on {base} (log: .demo/server.log)")
    wait_healthy(base, server)

    agent_env = dict(
        os.environ,
        XACLAB_AGENT_STATE_DIR=str(DEMO / "agent"),
        XACLAB_AGENT_BIN_DIR=str(TOP / "libxac" / "bin"),
        XACLAB_AGENT_SERVER=base,
        XACLAB_REGISTRATION_TOKEN=token,
    )
    name = socket.gethostname().split(".")[0] or "demo"
    subprocess.run(
        [str(VENV / "xaclab-agent"), "register", "--server", base, "--name", name],
        env=agent_env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    with open(DEMO / "agent.log", "ab") as log:
        agent = subprocess.Popen([str(VENV / "xaclab-agent"), "run"], env=agent_env, stdout=log, stderr=log)
    children.append(agent)
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
        for child in children:
            if child.poll() is not None:
                say(f"a process exited with code {child.returncode}; stopping (logs in .demo/)")
                stop()
        time.sleep(1)


if __name__ == "__main__":
    sys.exit(main())
