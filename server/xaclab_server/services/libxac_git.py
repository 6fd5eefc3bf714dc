"""The server's view of libxac's history: a git clone (``XACLAB_LIBXAC_GIT_DIR``).

It answers three questions: does a revision a run asks for exist (and which
commit is it: runs store the full hash, so "main" means the commit it named
when the run was queued), which commits lie between two revisions (those
that touch ``libxac_git_path``, oldest first: the candidates a bisection
chooses from), and where a revision stands in the history (series ordered
by revision).

git runs from an argument vector, never a shell; a revision is first checked
for its form (:func:`xaclab_contracts.factors.is_revision_name`: no leading
dash, no ``..``, no whitespace) and passed after ``--end-of-options``, so it
can never be read as an option.  The clone may belong to another user (the
playbook's): it is named ``safe.directory`` for each call.
"""

import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xaclab_contracts.factors import is_revision_name
from xaclab_contracts.suites import ParamError

FULL_HASH = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
GIT_TIMEOUT = 30.0


class GitError(RuntimeError):
    """git failed where it should not have; the message says what was asked."""


@dataclass(frozen=True, slots=True)
class LibxacGit:
    git_dir: Path
    path: str = "libxac"

    def _git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["git", "-c", f"safe.directory={self.git_dir}", "-C", str(self.git_dir), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            check=False,
            env={"GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent", "LC_ALL": "C"},
        )
        if check and done.returncode != 0:
            raise GitError(f"git {' '.join(args[:2])} in {self.git_dir}: {done.stderr.strip()}")
        return done

    def resolve(self, revision: str) -> str | None:
        """The full hash of the commit ``revision`` names, or None when there is none."""
        if not is_revision_name(revision):
            return None
        done = self._git(
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            f"{revision}^{{commit}}",
            check=False,
        )
        text = done.stdout.strip()
        return text if done.returncode == 0 and FULL_HASH.fullmatch(text) else None

    def is_ancestor(self, older: str, newer: str) -> bool:
        done = self._git("merge-base", "--is-ancestor", older, newer, check=False)
        return done.returncode == 0

    def between(self, good: str, bad: str) -> list[str]:
        """Commits after ``good`` up to ``bad`` that touch the libxac path, oldest first,
        always ending with ``bad``; first parents only (a merge is one step)."""
        done = self._git(
            "rev-list", "--reverse", "--first-parent", f"{good}..{bad}", "--", self.path
        )
        commits = [line for line in done.stdout.split() if FULL_HASH.fullmatch(line)]
        if not commits or commits[-1] != bad:
            commits.append(bad)
        return commits

    def subject(self, revision: str) -> str:
        done = self._git(
            "log", "-1", "--format=%s", "--end-of-options", revision, "--", check=False
        )
        return done.stdout.strip()[:200]

    def ranks(self) -> dict[str, int]:
        """Every commit of the history (all refs) → its place, oldest 0."""
        done = self._git("rev-list", "--reverse", "--topo-order", "--all")
        return {line: i for i, line in enumerate(done.stdout.split())}


def resolve_job_revision(params: Mapping[str, Any], git: LibxacGit | None) -> dict[str, Any]:
    """``params`` with ``libxac_revision`` resolved to its commit's full hash; ParamError with
    a sentence when the server cannot check it or it names no commit."""
    out = dict(params)
    if "libxac_revision" not in out:
        return out
    asked = out["libxac_revision"]
    if git is None:
        raise ParamError(
            "This server has no libxac git repository (XACLAB_LIBXAC_GIT_DIR), so it cannot "
            f"check the libxac revision {asked!r}; leave libxac_revision out to run the "
            "installed libxac."
        )
    try:
        full = git.resolve(str(asked))
    except (OSError, subprocess.SubprocessError) as exc:
        raise ParamError(f"The server could not ask git about {asked!r}: {exc}") from None
    if full is None:
        raise ParamError(
            f"The libxac revision {asked!r} does not exist in the server's libxac repository "
            f"({git.git_dir}); give a commit hash, branch or tag it holds (run the playbook "
            "to bring the clone up to date)."
        )
    out["libxac_revision"] = full
    return out
