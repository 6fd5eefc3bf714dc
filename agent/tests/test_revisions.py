"""A job's libxac revision: built from a git clone into the cache, smoke-tested, run.

Real parts: a throw-away git repository holding this checkout's libxac/ (as committed),
real make, the revision's own smoke tests, and the real page-touch suite.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from xaclab_testsupport.git import commit, start_libxac_repository

from xaclab_agent.config import Config
from xaclab_agent.errors import BuildError, ParamError
from xaclab_agent.jobrun import JobHooks, execute_job

TOP = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A repository with libxac/ and four commits: good, good again, smoke tests failing,
    not compiling."""
    repo = tmp_path_factory.mktemp("libxac-clone")
    commits = {"good": start_libxac_repository(repo)}
    (repo / "libxac" / "NOTES").write_text("a second good revision\n")
    commits["good2"] = commit(repo, "libxac: a note")
    smoke = repo / "libxac" / "tests" / "test_00_strerror.c"
    saved = smoke.read_text()
    smoke.write_text('#include <stdio.h>\nint main(void){puts("0 passed, 1 failed");return 1;}\n')
    commits["smoke"] = commit(repo, "libxac: a smoke test fails")
    smoke.write_text(saved)
    (repo / "libxac" / "src" / "zz_broken.c").write_text("#error this revision does not build\n")
    commits["broken"] = commit(repo, "libxac: does not compile")
    return repo, commits


def _config(tmp_path: Path, repo: Path | None, **overrides: Any) -> Config:
    config = Config(
        state_dir=tmp_path / "state",
        bin_dir=tmp_path / "no-installed-bin",  # a job with a revision never needs it
        work_dir=tmp_path / "work",
        suites_dir=TOP / "contracts" / "suites",
        libxac_repo=repo,
        build_jobs=2,
        write_cache_backend="kernel",
    )
    return replace(config, **overrides)


def _job(config: Config, revision: str, notes: list[str]) -> Any:
    results: list[dict[str, Any]] = []
    outcome = execute_job(
        config,
        suite_name="page-touch",
        profile="quick",
        params={"libxac_revision": revision, "max_pages": 4},
        fingerprint={"hostname": "test"},
        hooks=JobHooks(on_result=results.append, on_diagnostic=notes.append),
    )
    return outcome, results


def test_a_revision_is_built_once_smoke_tested_and_run(
    tmp_path: Path, clone: tuple[Path, dict[str, str]]
) -> None:
    repo, commits = clone
    config = _config(tmp_path, repo)
    notes: list[str] = []
    outcome, results = _job(config, commits["good"][:10], notes)
    assert outcome.succeeded, outcome.message
    assert results and {r["library"]["git_revision"] for r in results} == {commits["good"][:12]}
    libxac = results[0]["env"]["libxac"]
    assert libxac["revision"] == commits["good"] and libxac["requested"] == commits["good"][:10]
    assert libxac["smoke_tests"].endswith("passed, 0 failed")
    entry = tmp_path / "state" / "builds" / commits["good"]
    assert (entry / "ok").is_file() and (entry / "libxac" / "bin" / "page_touch").is_file()
    assert sum("building libxac" in n for n in notes) == 1
    again: list[str] = []
    outcome, results = _job(config, commits["good"], again)
    assert outcome.succeeded and results
    assert not any("building" in n for n in again)  # the cache's build, not a new one


def test_a_revision_that_fails_its_smoke_tests_is_never_run(
    tmp_path: Path, clone: tuple[Path, dict[str, str]]
) -> None:
    repo, commits = clone
    config = _config(tmp_path, repo)
    notes: list[str] = []
    with pytest.raises(BuildError, match=r"make check \(smoke tests\) failed") as first:
        _job(config, commits["smoke"], notes)
    assert "0 passed, 1 failed" in str(first.value)
    assert not (tmp_path / "work").exists() or not any((tmp_path / "work").iterdir())
    again: list[str] = []
    with pytest.raises(BuildError, match="is not run: its build failed"):
        _job(config, commits["smoke"], again)
    assert again == []  # refused from the record, not built again


def test_a_revision_that_does_not_compile_is_refused(
    tmp_path: Path, clone: tuple[Path, dict[str, str]]
) -> None:
    repo, commits = clone
    with pytest.raises(BuildError, match="make failed with status") as caught:
        _job(_config(tmp_path, repo), commits["broken"], [])
    assert "this revision does not build" in str(caught.value)


def test_unknown_revisions_and_missing_clones_are_refused_in_words(
    tmp_path: Path, clone: tuple[Path, dict[str, str]]
) -> None:
    repo, _commits = clone
    with pytest.raises(BuildError, match="is not in this machine's clone"):
        _job(_config(tmp_path, repo), "0123456789ab", [])
    with pytest.raises(BuildError, match="has no libxac git clone"):
        _job(_config(tmp_path, None), "main", [])
    with pytest.raises(ParamError, match="must be a git revision"):
        _job(_config(tmp_path, repo), "--upload-pack=touch /tmp/x", [])


def test_the_cache_keeps_the_newest_good_builds(
    tmp_path: Path, clone: tuple[Path, dict[str, str]]
) -> None:
    repo, commits = clone
    config = _config(tmp_path, repo, build_keep=1)
    assert _job(config, commits["good"], [])[0].succeeded
    assert _job(config, commits["good2"], [])[0].succeeded
    kept = sorted(p.name for p in (tmp_path / "state" / "builds").iterdir() if p.is_dir())
    assert kept == [commits["good2"]]
