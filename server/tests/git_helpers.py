"""A throw-away git repository with a libxac/ directory and a line of commits."""

import os
import subprocess
from pathlib import Path

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "xaclab tests",
    "GIT_AUTHOR_EMAIL": "tests@xaclab.invalid",
    "GIT_COMMITTER_NAME": "xaclab tests",
    "GIT_COMMITTER_EMAIL": "tests@xaclab.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=GIT_ENV, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def make_history(repo: Path, commits: int, *, other_every: int = 0) -> list[str]:
    """``commits`` commits that each change libxac/VERSION (and, every ``other_every``-th,
    one more that touches only docs/); the libxac commits' full hashes, oldest first."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "libxac").mkdir(exist_ok=True)
    (repo / "docs").mkdir(exist_ok=True)
    hashes = []
    for i in range(commits):
        (repo / "libxac" / "VERSION").write_text(f"0.1.{i}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"libxac: step {i}")
        hashes.append(git(repo, "rev-parse", "HEAD"))
        if other_every and i % other_every == 0:
            (repo / "docs" / "notes.md").write_text(f"note {i}\n")
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "-m", f"docs: note {i}")
    return hashes
