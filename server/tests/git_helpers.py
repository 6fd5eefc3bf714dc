"""A throw-away git repository with a libxac/ directory and a line of commits."""

from pathlib import Path

from xaclab_testsupport.git import commit, git

__all__ = ["git", "make_history"]


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
        hashes.append(commit(repo, f"libxac: step {i}"))
        if other_every and i % other_every == 0:
            (repo / "docs" / "notes.md").write_text(f"note {i}\n")
            commit(repo, f"docs: note {i}")
    return hashes
