"""Adaptive repetition: a profile with ``repeat_until`` runs its programs until every median
is precise, or its run limit; each result records the interval it reached.

The program is a real executable started by the agent's runner; what it prints is set
per test in ``spec.json`` beside it, and each of its runs draws other samples (seeded).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pytest
from xaclab_contracts.histogram import RAW_MAX

from xaclab_agent.repetition import pool

if TYPE_CHECKING:
    from tests.conftest import MakeScriptedSuite, ScriptedSuite

PROGRAM = """
import json, os, random, sys
here = os.path.dirname(os.path.abspath(__file__))
counter = os.path.join(here, "runs")
run = int(open(counter).read()) + 1 if os.path.exists(counter) else 1
open(counter, "w").write(str(run))
for spec in json.load(open(os.path.join(here, "spec.json"))):
    if spec.get("fail_on_run") == run:
        print("fatal: the disk filled up", file=sys.stderr)
        sys.exit(4)
    rng = random.Random(run * 1000 + len(spec["benchmark"]))
    samples = [spec["center"] * (1 + rng.uniform(-spec["spread"], spec["spread"]))
               for _ in range(spec["n"])]
    print(json.dumps({
        "format": "xaclab-result", "format_version": 1, "suite": "adaptive",
        "benchmark": spec["benchmark"], "sut": "os", "params": {"n": 1},
        "metric": "time_per_page", "unit": "us", "better": "lower", "samples": samples,
        "library": {"name": "libxac", "version": "0.1.0", "git_revision": "abc"}}))
"""

SUITE = {
    "name": "adaptive",
    "programs": ["adaptive_bench"],
    "sut": {"adaptive_bench": ["os"]},
    "systems": {"os": {"title": "the operating system", "modes": {}, "packages": []}},
    "profiles": {
        "quick": [],
        "full": [],
        "precise": {"args": [], "repeat_until": {"median_ci_percent": 2, "max_runs": 6}},
    },
}


@pytest.fixture
def suite(scripted_suite: MakeScriptedSuite) -> ScriptedSuite:
    return scripted_suite(SUITE, PROGRAM, "precise")


def test_it_stops_as_soon_as_every_median_is_precise(suite: ScriptedSuite) -> None:
    outcome = suite.run([{"benchmark": "steady", "center": 10.0, "spread": 0.005, "n": 5}])
    assert outcome.succeeded and suite.runs() == 2, "5 samples have no 95% interval; 10 do"
    (result,) = outcome.results
    assert len(result["samples"]) == 10
    repetition = result["env"]["repetition"]
    assert repetition["runs"] == 2 and repetition["stopped"] == "precise"
    assert repetition["median_ci_percent_wanted"] == 2 and repetition["max_runs"] == 6
    low, high = repetition["median_ci"]
    assert low <= sorted(result["samples"])[5] <= high
    assert 0 < repetition["median_ci_percent"] <= 2
    assert "after 2 runs (every median precise)" in outcome.message


def test_a_noisy_result_runs_to_the_limit_and_says_how_precise_it_got(suite: ScriptedSuite) -> None:
    outcome = suite.run(
        [
            {"benchmark": "steady", "center": 10.0, "spread": 0.005, "n": 5},
            {"benchmark": "wobbly", "center": 10.0, "spread": 0.6, "n": 5},
        ],
    )
    assert outcome.succeeded and suite.runs() == 6
    results = {r["benchmark"]: r for r in outcome.results}
    assert [len(r["samples"]) for r in results.values()] == [30, 30]
    wobbly = results["wobbly"]["env"]["repetition"]
    assert wobbly["stopped"] == "max_runs" and wobbly["median_ci_percent"] > 2
    assert results["steady"]["env"]["repetition"]["median_ci_percent"] <= 2
    assert "after 6 runs (run limit reached); widest interval ±" in outcome.message


def test_a_failed_run_stops_the_repetition_and_keeps_what_was_measured(
    suite: ScriptedSuite,
) -> None:
    outcome = suite.run(
        [{"benchmark": "wobbly", "center": 10.0, "spread": 0.6, "n": 5, "fail_on_run": 3}],
    )
    assert not outcome.succeeded and suite.runs() == 3
    assert "exited with status 4" in outcome.message
    (result,) = outcome.results
    assert len(result["samples"]) == 10
    assert result["env"]["repetition"]["stopped"] == "failed"


def test_a_profile_without_the_rule_runs_once(suite: ScriptedSuite) -> None:
    outcome = suite.run([{"benchmark": "wobbly", "center": 10.0, "spread": 0.6, "n": 5}], "quick")
    assert outcome.succeeded and suite.runs() == 1
    assert "repetition" not in outcome.results[0]["env"]


def test_noisy_runs_are_counted_in_the_pooled_hygiene() -> None:
    def run(noisy: bool, load: float) -> list[dict[str, Any]]:
        hygiene = {"before": {"loadavg_1m": load}, "after": {"loadavg_1m": load}, "noisy": noisy}
        return [{**_result("x", [1.0]), "env": {"kernel": {"release": "6.1"}, "hygiene": hygiene}}]

    (pooled,) = pool([run(False, 0.1), run(True, 3.0), run(False, 0.2)])
    hygiene = pooled["env"]["hygiene"]
    assert hygiene["noisy"] is True and hygiene["noisy_runs"] == 1
    assert hygiene["before"] == {"loadavg_1m": 0.1} and hygiene["after"] == {"loadavg_1m": 0.2}
    assert pooled["env"]["kernel"] == {"release": "6.1"} and pooled["samples"] == [1.0] * 3


def _result(benchmark: str, samples: list[float]) -> dict[str, Any]:
    return {
        "benchmark": benchmark,
        "sut": "os",
        "metric": "m",
        "unit": "us",
        "params": {},
        "samples": samples,
        "env": {},
    }


def test_pooling_above_the_raw_limit_makes_a_histogram() -> None:
    big = [1.0 + (i % 100) / 100 for i in range(RAW_MAX)]
    pooled = pool([[_result("x", big)], [_result("x", [0.5, 4.0])], [_result("y", [7.0])]])
    assert [r["benchmark"] for r in pooled] == ["x", "y"]
    histogram = pooled[0]["histogram"]
    assert "samples" not in pooled[0]
    assert histogram["count"] == RAW_MAX + 2 and (histogram["min"], histogram["max"]) == (0.5, 4.0)
    assert sum(c for _i, c in histogram["buckets"]) == RAW_MAX + 2
    assert math.isclose(histogram["sum"], math.fsum(big) + 4.5)
    assert pooled[1]["samples"] == [7.0]


def test_a_median_of_zero_does_not_hold_the_others_back(suite: ScriptedSuite) -> None:
    outcome = suite.run(
        [
            {"benchmark": "steady", "center": 10.0, "spread": 0.005, "n": 5},
            {"benchmark": "aborts", "center": 0.0, "spread": 0.0, "n": 5},
        ],
    )
    assert suite.runs() == 2
    zero = next(r for r in outcome.results if r["benchmark"] == "aborts")
    assert zero["env"]["repetition"]["median_ci_percent"] is None
