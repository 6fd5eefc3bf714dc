"""bench/slow_runs.py: the rounds in which a whole program was slow, found and left out."""

from types import ModuleType
from typing import Any

import pytest

from tests.bench_modules import load_bench

ROUNDS = 12


@pytest.fixture(scope="module")
def slow() -> ModuleType:
    return load_bench("slow_runs")


def series(benchmark: str, metric: str, better: str, medians: list[float]) -> dict[str, Any]:
    return {
        "suite": "storage",
        "benchmark": benchmark,
        "sut": "os",
        "metric": metric,
        "better": better,
        "params": {},
        "medians": medians,
    }


def flat(level: float, wobble: float = 0.01) -> list[float]:
    """A series that alternates 1 % about ``level``."""
    return [level * (1 + (wobble if i % 2 else -wobble)) for i in range(ROUNDS)]


def slowed(values: list[float], rounds: set[int], factor: float) -> list[float]:
    return [v * factor if i in rounds else v for i, v in enumerate(values)]


def recording(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"rounds": ROUNDS, "series": list(entries)}


def test_a_round_in_which_every_result_of_a_program_is_worse_is_a_slow_run(
    slow: ModuleType,
) -> None:
    data = recording(
        series("journal", "write_latency", "lower", slowed(flat(80.0), {3, 7}, 1.3)),
        # Throughput is better higher: the slow rounds are the low ones.
        series("journal", "write_throughput", "higher", slowed(flat(12000.0), {3, 7}, 0.75)),
        series("mprotect", "mprotect_time", "lower", flat(650.0)),
    )
    flags = slow.slow_runs(data, 0.08)
    assert [i for i, f in enumerate(flags[("storage", "journal")]) if f] == [3, 7]
    assert not any(flags[("storage", "mprotect")])


def test_better_results_are_not_slow_runs(slow: ModuleType) -> None:
    """A round in which every result is better (faster, higher throughput) is not flagged."""
    data = recording(
        series("journal", "write_latency", "lower", slowed(flat(80.0), {5}, 0.7)),
        series("journal", "write_throughput", "higher", slowed(flat(12000.0), {5}, 1.4)),
    )
    assert not any(slow.slow_runs(data, 0.08)[("storage", "journal")])


def test_one_result_alone_does_not_make_a_slow_run(slow: ModuleType) -> None:
    """The median over the program's results decides: one odd result out of three is not it."""
    data = recording(
        series("journal", "a", "lower", slowed(flat(1.0), {4}, 2.0)),
        series("journal", "b", "lower", flat(2.0)),
        series("journal", "c", "lower", flat(3.0)),
    )
    assert not any(slow.slow_runs(data, 0.08)[("storage", "journal")])


def test_the_limit_is_a_strict_bound(slow: ModuleType) -> None:
    data = recording(series("journal", "a", "lower", slowed([1.0] * ROUNDS, {2}, 1.1)))
    assert slow.slow_runs(data, 0.09)[("storage", "journal")][2]
    assert not slow.slow_runs(data, 0.11)[("storage", "journal")][2]


def test_without_slow_runs_leaves_them_out_of_that_program_only(slow: ModuleType) -> None:
    journal = slowed(flat(80.0), {3, 7}, 1.3)
    other = flat(650.0)
    partial = flat(5.0)[:-1]  # a series that missed a round: not aligned, left as it is
    data = recording(
        series("journal", "write_latency", "lower", journal),
        series("mprotect", "mprotect_time", "lower", other),
        series("journal", "write_bytes", "lower", partial),
    )
    out = slow.without_slow_runs(data, 0.08)
    by_metric = {e["metric"]: e["medians"] for e in out["series"]}
    assert by_metric["write_latency"] == [v for i, v in enumerate(journal) if i not in (3, 7)]
    assert by_metric["mprotect_time"] == other
    assert by_metric["write_bytes"] == partial
    # The recording given is not changed.
    assert data["series"][0]["medians"] == journal


def test_describe_lists_the_programs_with_slow_runs_most_first(slow: ModuleType) -> None:
    data = recording(
        series("journal", "write_latency", "lower", slowed(flat(80.0), {1, 3, 7}, 1.3)),
        series("mprotect", "mprotect_time", "lower", slowed(flat(650.0), {2}, 1.5)),
        series("memcpy_page", "memcpy_time", "lower", flat(40.0)),
    )
    line = slow.describe(slow.slow_runs(data, 0.08), 0.08)
    assert "of 12 rounds: storage/journal 3, storage/mprotect 1" in line
    assert "memcpy_page" not in line
    assert "none" in slow.describe(slow.slow_runs(recording(), 0.08), 0.08)
