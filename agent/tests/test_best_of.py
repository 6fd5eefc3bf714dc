"""Best of several runs: a profile with ``best_of`` runs its programs that many times and
keeps each result's best run, marked with ``params.best_of`` and ``env.best_of``.

The program is a real executable started by the agent's runner; each run prints the
medians ``spec.json`` gives for that run (the median of its three samples).
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING, Any

import pytest

from xaclab_agent.best_of import keep_best

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
    "profiles": {"quick": [], "full": [], "watch": {"args": [], "best_of": {"runs": 3}}},
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
    assert result["env"]["best_of"] == {"runs": 3, "kept_run": 2, "run_medians": [9.0, 8.0, None]}


def test_a_profile_without_the_rule_runs_once(suite: ScriptedSuite) -> None:
    outcome = suite.run(
        [{"benchmark": "latency", "better": "lower", "medians": [9.0, 8.0, 7.0]}], "quick"
    )
    assert outcome.succeeded and suite.runs() == 1
    (result,) = outcome.results
    assert "best_of" not in result["params"] and "best_of" not in result["env"]


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
        return [
            {
                "benchmark": "b",
                "sut": "os",
                "metric": "m",
                "unit": "us",
                "better": "lower",
                "params": {},
                "histogram": histogram,
            }
        ]

    (kept,) = keep_best([run(3.0), run(2.0)])
    assert kept["histogram"]["min"] == 2.0 and kept["env"]["best_of"]["kept_run"] == 2
