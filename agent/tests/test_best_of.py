"""Best of several runs: a profile with ``best_of`` runs its programs that many times and
keeps each result's best run, marked with ``params.best_of`` and ``env.best_of``.

The program is a real executable started by the agent's runner; each run prints the
medians ``spec.json`` gives for that run (the median of its three samples).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
from xaclab_contracts.suites import BestOf

from xaclab_agent.best_of import keep_best, run_best_of
from xaclab_agent.jobrun import JobHooks
from xaclab_agent.progress import Progress
from xaclab_agent.runner import RunOutcome

if TYPE_CHECKING:
    from tests.conftest import MakeScriptedSuite, ScriptedSuite

PROGRAM = """
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
counter = os.path.join(here, "runs")
run = int(open(counter).read()) + 1 if os.path.exists(counter) else 1
open(counter, "w").write(str(run))
for spec in json.load(open(os.path.join(here, "spec.json"))):
    if spec.get("fail_on_run") == run:
        print("fatal: the disk filled up", file=sys.stderr)
        sys.exit(4)
    value = spec["medians"][run - 1]
    if value is None:
        continue
    print(json.dumps({
        "format": "xaclab-result", "format_version": 1, "suite": "watched",
        "benchmark": spec["benchmark"], "sut": "os", "params": {"n": 1},
        "metric": "rate", "unit": "ops/s", "better": spec["better"],
        "samples": [value * 0.99, value, value * 1.01],
        "library": {"name": "libxac", "version": "0.1.0", "git_revision": "abc"}}))
"""

SUITE = {
    "name": "watched",
    "programs": ["watched_bench"],
    "sut": {"watched_bench": ["os"]},
    "systems": {"os": {"title": "the operating system", "modes": {}, "packages": []}},
    "profiles": {
        "quick": [],
        "full": [],
        "watch": {"args": [], "best_of": {"runs": 3}},
        "spaced": {"args": [], "best_of": {"runs": 3, "gap_s": 0.2}},
    },
}


@pytest.fixture
def suite(scripted_suite: MakeScriptedSuite) -> ScriptedSuite:
    return scripted_suite(SUITE, PROGRAM, "watch")


def test_each_result_keeps_its_own_best_run(suite: ScriptedSuite) -> None:
    outcome = suite.run(
        [
            {"benchmark": "latency", "better": "lower", "medians": [13.0, 10.0, 12.5]},
            {"benchmark": "throughput", "better": "higher", "medians": [900.0, 700.0, 1000.0]},
        ],
    )
    assert outcome.succeeded and suite.runs() == 3
    assert outcome.message == "2 results, each the best of 3 runs"
    latency, throughput = outcome.results
    assert statistics.median(latency["samples"]) == 10.0, "the lowest median where lower is better"
    assert latency["env"]["best_of"] == {
        "runs": 3,
        "kept_run": 2,
        "run_medians": [13.0, 10.0, 12.5],
        "gap_s": 0.0,
    }
    assert statistics.median(throughput["samples"]) == 1000.0, "the highest where higher is"
    assert throughput["env"]["best_of"]["kept_run"] == 3
    for result in (latency, throughput):
        assert result["params"]["best_of"] == 3 and result["params"]["n"] == 1
        assert "fingerprint_version" in result["env"], "the run's own env is kept"


def test_a_result_missing_from_a_run_is_the_best_of_the_runs_that_made_it(
    suite: ScriptedSuite,
) -> None:
    outcome = suite.run(
        [
            {"benchmark": "twice", "better": "lower", "medians": [5.0, None, 4.0]},
            {"benchmark": "once", "better": "lower", "medians": [None, 7.0, None]},
        ],
    )
    twice, once = (
        next(r for r in outcome.results if r["benchmark"] == b) for b in ("twice", "once")
    )
    assert twice["params"]["best_of"] == 2
    assert twice["env"]["best_of"]["run_medians"] == [5.0, None, 4.0]
    assert "best_of" not in once["params"] and "best_of" not in once["env"], (
        "one run's result is a single run, in the single runs' series"
    )


def test_a_failed_run_stops_and_keeps_the_best_of_what_was_measured(suite: ScriptedSuite) -> None:
    outcome = suite.run(
        [{"benchmark": "latency", "better": "lower", "medians": [9.0, 8.0, 1.0], "fail_on_run": 3}],
    )
    assert not outcome.succeeded and suite.runs() == 3
    assert "exited with status 4" in outcome.message
    (result,) = outcome.results
    assert statistics.median(result["samples"]) == 8.0
    assert result["env"]["best_of"] == {
        "runs": 3,
        "kept_run": 2,
        "run_medians": [9.0, 8.0, None],
        "gap_s": 0.0,
    }


def test_a_profile_without_the_rule_runs_once(suite: ScriptedSuite) -> None:
    outcome = suite.run(
        [{"benchmark": "latency", "better": "lower", "medians": [9.0, 8.0, 7.0]}], "quick"
    )
    assert outcome.succeeded and suite.runs() == 1
    (result,) = outcome.results
    assert "best_of" not in result["params"] and "best_of" not in result["env"]


def _result(**measure: Any) -> dict[str, Any]:
    """One result line of a made-up program, measured as ``measure`` (samples or a
    histogram): lower is better."""
    return {
        "benchmark": "b",
        "sut": "os",
        "metric": "m",
        "unit": "us",
        "better": "lower",
        "params": {},
        **measure,
    }


def test_a_histogram_result_is_judged_by_its_median() -> None:
    def run(low: float) -> list[dict[str, Any]]:
        histogram = {
            "scheme": "log2-64",
            "count": 1,
            "min": low,
            "max": low,
            "sum": low,
            "sum_squares": low * low,
            "buckets": [[0, 1]],
        }
        return [_result(histogram=histogram)]

    (kept,) = keep_best([run(3.0), run(2.0)])
    assert kept["histogram"]["min"] == 2.0 and kept["env"]["best_of"]["kept_run"] == 2


# --- runs spaced by gap_s ---


def _best_of_canned(
    rule: BestOf,
    *,
    timeout: float | None = None,
    clock: Callable[[], float] = lambda: 0.0,
    on_pause: Callable[[float], None] = lambda seconds: None,
    on_progress: Callable[[Progress], None] = lambda progress: None,
) -> tuple[RunOutcome, list[str]]:
    """run_best_of over canned runs (medians 5, 4, 6) and a pause that never sees a stop;
    the outcome and what happened in order: "run N" and "pause S"."""
    medians = iter([5.0, 4.0, 6.0])
    calls: list[str] = []

    def run_once(progress: Callable[[Progress], None], left: float | None) -> RunOutcome:
        calls.append(f"run {sum(call.startswith('run') for call in calls) + 1}")
        return RunOutcome(True, "ok", [_result(samples=[next(medians)])], False)

    def wait(seconds: float) -> bool:
        calls.append(f"pause {seconds:g}")
        on_pause(seconds)
        return False

    outcome = run_best_of(
        run_once,
        rule,
        on_progress=on_progress,
        timeout=timeout,
        stopping=lambda: False,
        clock=clock,
        wait=wait,
    )
    return outcome, calls


def test_a_gap_pauses_between_runs_and_is_recorded() -> None:
    progress: list[str] = []
    outcome, calls = _best_of_canned(
        BestOf(runs=3, gap_s=20.0), on_progress=lambda p: progress.append(p.message)
    )
    assert calls == ["run 1", "pause 20", "run 2", "pause 20", "run 3"], "no pause before the first"
    assert outcome.message == "1 results, each the best of 3 runs 20 s apart"
    (kept,) = outcome.results
    assert kept["env"]["best_of"]["gap_s"] == 20.0 and kept["env"]["best_of"]["kept_run"] == 2
    assert "run 1 of 3 done; the next in 20 s" in progress[0]


def test_a_pause_never_runs_past_the_jobs_time_limit() -> None:
    now = [0.0]

    def advance(seconds: float) -> None:
        now[0] += seconds

    outcome, calls = _best_of_canned(
        BestOf(runs=3, gap_s=30.0), timeout=12.0, clock=lambda: now[0], on_pause=advance
    )
    assert calls == ["run 1", "pause 12"], "the pause is cut at the deadline, and no run follows"
    (kept,) = outcome.results
    assert "best_of" not in kept["params"], "one run made: a single run"


def test_a_stop_during_the_pause_keeps_the_runs_made(suite: ScriptedSuite) -> None:
    spec = [{"benchmark": "latency", "better": "lower", "medians": [9.0, 8.0, 7.0]}]
    hooks = JobHooks()
    waiting: list[str] = []

    def on_progress(progress: Progress) -> None:
        if "the next in" in progress.message:
            waiting.append(progress.message)
            hooks.stop.set()

    hooks.on_progress = on_progress
    outcome = suite.run(spec, "spaced", hooks)
    assert waiting and suite.runs() == 1, "the stop came in the first pause; no second run"
    (result,) = outcome.results
    assert statistics.median(result["samples"]) == 9.0 and "best_of" not in result["params"]


def test_spaced_runs_of_a_real_program_record_their_gap(suite: ScriptedSuite) -> None:
    progress: list[str] = []
    outcome = suite.run(
        [{"benchmark": "latency", "better": "lower", "medians": [9.0, 7.0, 8.0]}],
        "spaced",
        JobHooks(on_progress=lambda p: progress.append(p.message)),
    )
    assert outcome.succeeded and suite.runs() == 3
    assert outcome.message == "1 results, each the best of 3 runs 0.2 s apart"
    (result,) = outcome.results
    assert result["env"]["best_of"]["gap_s"] == 0.2 and result["params"]["best_of"] == 3
    assert sum("the next in 0.2 s" in m for m in progress) == 2
