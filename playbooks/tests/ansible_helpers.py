"""Helpers for the playbook tests: where ansible lives and a clean environment."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

PLAYBOOKS = Path(__file__).resolve().parent.parent
REPO = PLAYBOOKS.parent


def tool(name: str) -> str:
    """A console script from the running interpreter's environment, else from PATH."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed; run scripts/install-python.sh")
    return found


def ansible_env(home: Path) -> dict[str, str]:
    """Keep ansible's caches and temp files out of ~/.ansible and the checkout."""
    env = dict(os.environ)
    env.update(
        ANSIBLE_HOME=str(home),
        ANSIBLE_LOCAL_TEMP=str(home / "tmp"),
        ANSIBLE_REMOTE_TEMP=str(home / "remote-tmp"),
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_FORCE_COLOR="0",
        ANSIBLE_RETRY_FILES_ENABLED="0",
        ANSIBLE_CONFIG=str(PLAYBOOKS / "ansible.cfg"),
        PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '/usr/bin:/bin')}",
    )
    return env
