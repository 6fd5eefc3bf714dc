from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from xaclab_contracts.suites import load_suite

from xaclab_agent.errors import ParamError, SuiteError
from xaclab_agent.progress import Progress
from xaclab_agent.runner import run_job

ENV = {"hostname": "test", "fingerprint_hash": "sha256:0"}


def run(lab: Any, params: Any = None, **kw: Any) -> Any:
    return run_job(
        load_suite("fake", lab.suites_dir),
        kw.pop("profile", "quick"),
        params if params is not None else {"repetitions": 2},
        bin_dir=lab.bin_dir,
        work_root=lab.work_dir,
        env=ENV,
        **kw,
    )


def test_end_to_end_success(lab: Any) -> None:
    progress: list[Progress] = []
    diagnostics: list[str] = []
    streamed: list[dict[str, Any]] = []
    outcome = run(
        lab,
        {"repetitions": 2, "advisory": True, "access": "read"},
        on_progress=progress.append,
        on_diagnostic=diagnostics.append,
        on_result=streamed.append,
    )
    assert outcome.succeeded and outcome.status == "succeeded"
    assert outcome.message == "2 results"
    assert len(outcome.results) == 2 and streamed == outcome.results
    assert all(r["env"] == ENV for r in outcome.results)
    assert lab.runs() == [["--quick", "--reps", "2", "--advisory", "--access", "read"]]
    assert [p.fraction for p in progress] == [0.0, 0.5, 1.0]
    assert diagnostics == ["diagnostic: hello"]


def test_fresh_work_dir_is_cwd_and_tmpdir_and_removed(lab: Any) -> None:
    outcome = run(lab)
    params = outcome.results[0]["params"]
    assert params["cwd"] == params["tmpdir"]
    job_dir = Path(params["cwd"])
    assert job_dir.parent == lab.work_dir
    assert not job_dir.exists()


def test_nonzero_exit_fails_but_keeps_results(lab: Any) -> None:
    lab.set_mode("fail")
    outcome = run(lab)
    assert not outcome.succeeded
    assert "exited with status 3" in outcome.message
    assert "fatal: disk on fire" in outcome.message
    assert len(outcome.results) == 2


def test_invalid_stdout_line_fails_the_job(lab: Any) -> None:
    lab.set_mode("badline")
    outcome = run(lab)
    assert not outcome.succeeded
    assert "invalid result line" in outcome.message and "line 3: not JSON" in outcome.message


def test_program_must_not_set_env(lab: Any) -> None:
    lab.set_mode("env")
    outcome = run(lab)
    assert not outcome.succeeded and "'env'" in outcome.message


@pytest.mark.parametrize(
    "params",
    [
        {"access": "; rm -rf /"},
        {"access": "$(id)"},
        {"access": "../../etc/passwd"},
        {"repetitions": 1000},
        {"bogus": 1},
    ],
)
def test_refused_params_run_nothing(lab: Any, params: dict[str, Any]) -> None:
    with pytest.raises(ParamError):
        run(lab, params)
    assert lab.runs() == []
    assert not lab.work_dir.exists()


def test_missing_program(lab: Any) -> None:
    (lab.bin_dir / "fake_bench").unlink()
    with pytest.raises(SuiteError, match="not found"):
        run(lab)


def test_stop_kills_the_child(lab: Any) -> None:
    lab.set_mode("sleep")
    stop = threading.Event()
    timer = threading.Timer(1.0, stop.set)
    timer.start()
    started = time.monotonic()
    outcome = run(lab, stop=stop)
    timer.cancel()
    assert time.monotonic() - started < 20
    assert not outcome.succeeded and "shutting down" in outcome.message
    assert len(outcome.results) == 2


def test_timeout(lab: Any) -> None:
    lab.set_mode("sleep")
    outcome = run(lab, timeout=1.0)
    assert not outcome.succeeded and "time limit" in outcome.message
