"""The playbooks pass ansible-lint's production profile and yamllint."""

from __future__ import annotations

import subprocess

from playbooks.tests.ansible_helpers import PLAYBOOKS, ansible_env, tool


def test_yamllint_is_clean() -> None:
    proc = subprocess.run(
        [tool("yamllint"), "--strict", "-c", str(PLAYBOOKS / ".yamllint"), "."],
        cwd=PLAYBOOKS,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ansible_lint_production_profile_is_clean(tmp_path) -> None:  # type: ignore[no-untyped-def]
    proc = subprocess.run(
        [
            tool("ansible-lint"),
            "--profile",
            "production",
            "--offline",
            "-c",
            str(PLAYBOOKS / ".ansible-lint"),
            "site.yml",
            "server.yml",
            "roles/",
        ],
        cwd=PLAYBOOKS,
        env=ansible_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-4000:]
