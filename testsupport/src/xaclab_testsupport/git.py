"""Throw-away git repositories: libxac's history as the lab's clone would hold it.

:func:`git` runs git in a repository with a fixed author and no user or system
configuration; :func:`commit` records everything in the work tree;
:func:`start_libxac_repository` makes a repository whose first commit is this
checkout's ``libxac/`` as committed (what the playbooks' clone of the
controller's repository holds), for tests that build or bisect revisions.
"""

import io
import os
import subprocess
import tarfile
from pathlib import Path

from xaclab_testsupport.paths import REPO

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
    """``git -C repo ARGS``; its stdout, stripped (CalledProcessError if it fails)."""
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=GIT_ENV, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def commit(repo: Path, message: str) -> str:
    """Commit every change in the work tree; the new commit's full hash."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def start_libxac_repository(repo: Path) -> str:
    """A new repository at ``repo`` (branch main) whose first commit holds this checkout's
    committed ``libxac/``; that commit's hash."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", "HEAD", "libxac"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(repo)  # this checkout's own archive
    return commit(repo, "libxac as committed")
