from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

import pytest

from xaclab_agent.client import AgentClient, RetryPolicy
from xaclab_agent.config import Config
from xaclab_agent.daemon import Daemon, Stopping


def make_daemon(lab: Any, server: Any, tmp_path: Path) -> Daemon:
    config = Config(
        state_dir=tmp_path / "state",
        bin_dir=lab.bin_dir,
        work_dir=lab.work_dir,
        suites_dir=lab.suites_dir,
        claim_wait=0,
        progress_interval=0,
    )
    client = AgentClient(
        "http://agent.test",
        server.token,
        transport=server.transport(),
        retry=RetryPolicy(attempts=1),
    )
    return Daemon(config, client, fingerprint={"fingerprint_hash": "h"}, rng=random.Random(0))


def job(job_id: int = 17, **params: Any) -> dict[str, Any]:
    return {"job_id": job_id, "run_id": 9, "suite": "fake", "profile": "quick", "params": params}


def test_once_runs_a_job_and_reports_everything(lab: Any, server: Any, tmp_path: Path) -> None:
    server.jobs.append(job(repetitions=2))
    daemon = make_daemon(lab, server, tmp_path)
    assert daemon.run(once=True) == 0
    assert server.finished[17] == {"status": "succeeded", "message": "2 results"}
    results = server.results()
    assert len(results) == 2
    for result in results:
        assert result["env"]["write_cache"]["requested"] == "unchanged"
        assert "noisy" in result["env"]["hygiene"] and "storage" in result["env"]
    assert "diagnostic: hello" in server.log_text(17)
    assert server.progress, "progress lines are forwarded"
    kinds = [path.rsplit("/", 1)[-1] for _, path in server.calls]
    assert kinds.index("results") < kinds.index("finish")
    assert daemon.spool.pending() == []


def test_once_without_a_job(lab: Any, server: Any, tmp_path: Path) -> None:
    assert make_daemon(lab, server, tmp_path).run(once=True) == 0
    assert [p for _, p in server.calls] == ["/jobs/claim"]


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"access": "; rm -rf /"}, "not allowed"),
        ({"access": "$(id)"}, "not allowed"),
        ({"access": "../../etc/passwd"}, "not allowed"),
        ({"repetitions": 0}, "outside"),
        ({"nope": 1}, "does not declare"),
    ],
)
def test_refused_job_is_failed_and_runs_nothing(
    lab: Any, server: Any, tmp_path: Path, params: dict[str, Any], reason: str
) -> None:
    server.jobs.append(job(**params))
    make_daemon(lab, server, tmp_path).run(once=True)
    assert server.finished[17]["status"] == "failed"
    assert reason in server.finished[17]["message"]
    assert "refused before running" in server.finished[17]["message"]
    assert lab.runs() == [] and server.results() == []


def test_unknown_suite_fails_the_job(lab: Any, server: Any, tmp_path: Path) -> None:
    server.jobs.append(dict(job(), suite="../../etc/passwd"))
    make_daemon(lab, server, tmp_path).run(once=True)
    assert "unknown suite" in server.finished[17]["message"]


def test_failed_program_uploads_its_results_then_fails(
    lab: Any, server: Any, tmp_path: Path
) -> None:
    lab.set_mode("fail")
    server.jobs.append(job())
    make_daemon(lab, server, tmp_path).run(once=True)
    assert server.finished[17]["status"] == "failed"
    assert "status 3" in server.finished[17]["message"]
    assert len(server.results()) == 2


def test_outage_loses_nothing_and_blocks_the_next_claim(
    lab: Any, server: Any, tmp_path: Path
) -> None:
    server.jobs.append(job())
    daemon = make_daemon(lab, server, tmp_path)
    server.fail_paths["results"] = 503
    assert daemon.run(once=True) == 1
    assert len(daemon.spool.pending()) == 2 and 17 not in server.finished

    server.calls.clear()
    server.fail_paths.clear()
    assert make_daemon(lab, server, tmp_path).run(once=True) == 0
    kinds = [p.rsplit("/", 1)[-1] for _, p in server.calls]
    assert kinds == ["results", "finish", "claim"], "the spool drains before any claim"
    assert len(server.results()) == 2 and server.finished[17]["status"] == "succeeded"
    assert lab.runs() and len(lab.runs()) == 1, "the job did not run twice"


def test_stop_during_job_finishes_it_as_failed(lab: Any, server: Any, tmp_path: Path) -> None:
    lab.set_mode("sleep")
    server.jobs.append(job())
    daemon = make_daemon(lab, server, tmp_path)
    threading.Timer(1.0, daemon.stop.set).start()
    assert daemon.run() == 0
    assert server.finished[17]["status"] == "failed"
    assert "shutting down" in server.finished[17]["message"]
    assert len(server.results()) == 2


def test_signal_while_idle_leaves_the_wait(lab: Any, server: Any, tmp_path: Path) -> None:
    daemon = make_daemon(lab, server, tmp_path)
    daemon.request_stop(15)  # not idle: only flags the stop
    assert daemon.stop.is_set()
    daemon._idle = True
    with pytest.raises(Stopping):
        daemon.request_stop(15)
    daemon._idle = False
    assert daemon.run() == 0
    assert server.calls == []
