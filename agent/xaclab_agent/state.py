"""The registration kept in the state dir: ``agent-token`` and ``registration.json`` (0600)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from xaclab_agent.atomic import atomic_write
from xaclab_agent.errors import ConfigError

TOKEN_FILE = "agent-token"
REGISTRATION_FILE = "registration.json"


@dataclass(frozen=True)
class Registration:
    server: str
    name: str
    machine_id: int
    agent_token: str


def save_registration(state_dir: Path, registration: Registration) -> None:
    state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic_write(state_dir / TOKEN_FILE, registration.agent_token.encode("utf-8") + b"\n")
    about = {
        "server": registration.server,
        "name": registration.name,
        "machine_id": registration.machine_id,
    }
    atomic_write(state_dir / REGISTRATION_FILE, json.dumps(about, indent=2).encode("utf-8"))


def load_registration(state_dir: Path) -> Registration:
    try:
        token = (state_dir / TOKEN_FILE).read_text(encoding="utf-8").strip()
        about = json.loads((state_dir / REGISTRATION_FILE).read_text(encoding="utf-8"))
        return Registration(
            server=str(about["server"]),
            name=str(about["name"]),
            machine_id=int(about["machine_id"]),
            agent_token=token,
        )
    except FileNotFoundError:
        raise ConfigError(
            f"this agent is not registered (no {TOKEN_FILE} in {state_dir}); "
            "run 'xaclab-agent register' first"
        ) from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"registration in {state_dir} is unreadable: {exc}") from exc
