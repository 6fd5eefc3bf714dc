"""Building a libxac revision a job asks for, in a cache, from the lab's git clone.

A job with ``libxac_revision`` (the server sends the commit's full hash) runs
the benchmark programs of that revision, not the installed ones.  The agent
builds them from the git clone the playbook provisions (``libxac_repo``,
roles/xaclab_libxac), once per revision, in ``build_cache/<hash>``:

1. ``git archive`` of the revision's ``libxac_subdir`` is unpacked into a
   scratch directory beside the cache entry: directories and regular files
   only, every name relative and without ``..`` (:func:`_unpack`; a symbolic
   link is left out: git's links in libxac/ point outside it);
2. ``make all`` with ``GITREV`` = the first 12 hex digits, so every result's
   ``library.git_revision`` names the revision;
3. the revision's own ``make check`` smoke subset: the unit tests matching
   ``smoke_tests`` (``test_0[0-3]*``: error strings, environment, misuse,
   commit and advisory, under a second) are built and run by its
   ``tests/run-tests.sh``;
4. the entry is renamed into place with an ``ok`` marker (the smoke summary),
   or a ``failed`` one (which step failed, its last output lines).

A revision whose build or smoke tests failed is never run: every later job
for it is refused at once with the recorded reason (delete
``build_cache/<hash>`` to try again).  Builds are serialised by a lock on
``build_cache/.lock``; the newest ``build_keep`` good builds are kept.
Commands run from argument vectors, never a shell; the revision is checked
for its form before git sees it and passed after ``--end-of-options``.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import tarfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from xaclab_contracts.factors import is_revision_name

from xaclab_agent.atomic import atomic_write
from xaclab_agent.config import Config
from xaclab_agent.errors import BuildError

SHORT = 12
TAIL_LINES = 15
MESSAGE_CHARS = 2000
# Lines that say why a build or its smoke tests failed: a compiler's error, a failed
# check, a test's count with failures in it.
FAILURE_LINE = re.compile(r"error:|: FAILED|\b[1-9][0-9]* failed$")
WHY_LINES = 5


@dataclass(frozen=True)
class RevisionBuild:
    revision: str  # the commit's full hash
    requested: str  # what the job asked for
    bin_dir: Path
    smoke: str  # the smoke tests' summary line

    @property
    def git_revision(self) -> str:
        return self.revision[:SHORT]

    def env(self) -> dict[str, str]:
        """What the results record about the build (``env.libxac``)."""
        return {
            "revision": self.revision,
            "requested": self.requested,
            "build": str(self.bin_dir.parent),
            "smoke_tests": self.smoke,
        }


def prepare(config: Config, requested: str, note: Callable[[str], None]) -> RevisionBuild:
    """The built revision (building it if needed); BuildError with a sentence otherwise."""
    repo = config.libxac_repo
    if repo is None or not repo.exists():
        raise BuildError(
            f"this agent has no libxac git clone (libxac_repo = {repo}); the playbook "
            "provisions one (roles/xaclab_libxac), so the job's libxac_revision cannot be built"
        )
    revision = resolve(repo, requested)
    cache = config.build_cache or config.state_dir / "builds"
    cache.mkdir(parents=True, exist_ok=True)
    entry = cache / revision
    with _locked(cache / ".lock"):
        if not (entry / "ok").is_file() and not (entry / "failed").is_file():
            _build(config, repo, revision, entry, note)
        if (entry / "failed").is_file():
            raise BuildError(
                f"libxac {revision[:SHORT]} is not run: its build failed "
                f"({(entry / 'failed').read_text().strip()})"
            )
        os.utime(entry / "ok")  # the newest used are kept
        _prune(cache, keep=config.build_keep)
    return RevisionBuild(
        revision=revision,
        requested=requested,
        bin_dir=entry / config.libxac_subdir / "bin",
        smoke=(entry / "ok").read_text().strip(),
    )


def resolve(repo: Path, requested: str) -> str:
    if not is_revision_name(requested):
        raise BuildError(f"libxac_revision {requested!r} is not a git revision")
    done = _git(
        repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{requested}^{{commit}}"
    )
    if done.returncode != 0:
        raise BuildError(
            f"libxac revision {requested!r} is not in this machine's clone ({repo}); run the "
            "playbook (site.yml) to bring the clone up to date"
        )
    return done.stdout.strip()


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-c", f"safe.directory={repo}", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env=_clean_env(),
    )


def _clean_env() -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        # No configuration of the user running the agent: the build is the same anywhere.
        "HOME": "/nonexistent",
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
    }


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build(
    config: Config, repo: Path, revision: str, entry: Path, note: Callable[[str], None]
) -> None:
    scratch = entry.with_name(f"{entry.name}.building-{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.rmtree(entry, ignore_errors=True)
    scratch.mkdir(parents=True)
    log_path = scratch / "build.log"
    started = time.monotonic()
    short = revision[:SHORT]
    note(f"building libxac {short} in {entry}")
    try:
        _export(repo, revision, config.libxac_subdir, scratch)
        source = scratch / config.libxac_subdir
        jobs = str(config.build_jobs or os.cpu_count() or 1)
        make = ["make", "-C", str(source), f"-j{jobs}", f"GITREV={short}"]
        _step("make", [*make, "all"], log_path, config.build_timeout)
        tests = sorted(p.stem for p in (source / "tests").glob(f"{config.smoke_tests}.c"))
        if not tests or not (source / "tests" / "run-tests.sh").is_file():
            raise BuildError(f"no smoke tests matching {config.smoke_tests!r} in this revision")
        _step(
            "make check (smoke build)",
            [*make, *(f"build/tests/{t}" for t in tests)],
            log_path,
            config.build_timeout,
        )
        summary = _step(
            "make check (smoke tests)",
            ["sh", "tests/run-tests.sh", "build/tests", config.smoke_tests],
            log_path,
            config.build_timeout,
            cwd=source,
        )
    except BuildError as exc:
        atomic_write(scratch / "failed", f"{exc}\n".encode(), mode=0o644)
        scratch.rename(entry)
        note(f"libxac {short}: {exc}")
        return
    atomic_write(scratch / "ok", f"{summary}\n".encode(), mode=0o644)
    scratch.rename(entry)
    note(f"built libxac {short} in {time.monotonic() - started:.0f} s; smoke tests: {summary}")


def _export(repo: Path, revision: str, subdir: str, into: Path) -> None:
    archive = subprocess.Popen(
        [
            "git",
            "-c",
            f"safe.directory={repo}",
            "-C",
            str(repo),
            "archive",
            "--format=tar",
            revision,
            "--",
            subdir,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_clean_env(),
    )
    assert archive.stdout is not None and archive.stderr is not None
    try:
        _unpack(archive.stdout, into)
    except tarfile.TarError as exc:
        archive.kill()
        raise BuildError(
            f"git archive of {revision[:SHORT]} could not be unpacked: {exc}"
        ) from None
    finally:
        error = archive.stderr.read().decode("utf-8", "replace").strip()
        archive.wait()
    if archive.returncode != 0 or not (into / subdir / "Makefile").is_file():
        raise BuildError(
            f"{subdir}/ of {revision[:SHORT]} could not be exported ({error or 'no Makefile'})"
        )


def _unpack(stream: IO[bytes], into: Path) -> None:
    """Directories and regular files of a tar stream, under ``into`` and nowhere else."""
    with tarfile.open(fileobj=stream, mode="r|") as tar:
        for member in tar:
            parts = Path(member.name).parts
            if member.name.startswith("/") or ".." in parts or not parts:
                raise tarfile.TarError(f"unsafe name {member.name!r}")
            target = into.joinpath(*parts)
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
            elif member.isreg():
                target.parent.mkdir(parents=True, exist_ok=True)
                source = tar.extractfile(member)
                assert source is not None
                with target.open("wb") as out:
                    shutil.copyfileobj(source, out)
                target.chmod(0o755 if member.mode & 0o111 else 0o644)


def _step(
    what: str, argv: list[str], log_path: Path, timeout: float, cwd: Path | None = None
) -> str:
    """Run one build step, appending its output to the log; its last line, or BuildError."""
    with log_path.open("ab") as log:
        log.write(f"$ {' '.join(argv)}\n".encode())
        log.flush()
        try:
            done = subprocess.run(
                argv,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=timeout or None,
                check=False,
                env={**_clean_env(), "MAKEFLAGS": ""},
            )
        except subprocess.TimeoutExpired:
            raise BuildError(f"{what} took longer than {timeout:g} s") from None
    lines = log_path.read_text(errors="replace").splitlines()
    if done.returncode != 0:
        head = f"{what} failed with status {done.returncode}: "
        # What says why (the compiler's errors, the checks that failed) first, then the end
        # of the output; long command lines are what gives way to the length limit.
        why = [line for line in lines if FAILURE_LINE.search(line)][-WHY_LINES:]
        shown = list(dict.fromkeys(why + lines[-TAIL_LINES:]))
        raise BuildError((head + " | ".join(shown))[:MESSAGE_CHARS])
    return lines[-1] if lines else ""


def _prune(cache: Path, *, keep: int) -> None:
    good = sorted(
        (p for p in cache.iterdir() if (p / "ok").is_file()),
        key=lambda p: (p / "ok").stat().st_mtime,
        reverse=True,
    )
    for old in good[keep:]:
        shutil.rmtree(old, ignore_errors=True)
