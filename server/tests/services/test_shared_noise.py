"""bench/shared_noise.py: how much of each series' noise the other series of its rounds share."""

import math
from types import ModuleType
from typing import Any

import pytest

from tests.bench_modules import load_bench

ROUNDS = 20
# A host's speed per round, a time's factor: it wanders by up to 20 %.
HOST = [1.0, 1.08, 0.95, 1.15, 1.02, 0.9, 1.1, 1.05, 0.97, 1.2] * 2


@pytest.fixture(scope="module")
def shared() -> ModuleType:
    return load_bench("shared_noise")


def series(benchmark: str, better: str, medians: list[float], sut: str = "os") -> dict[str, Any]:
    return {
        "suite": "storage",
        "benchmark": benchmark,
        "sut": sut,
        "metric": "time" if better == "lower" else "throughput",
        "better": better,
        "params": {},
        "medians": medians,
    }


def wobble(level: float, size: float, phase: int = 0) -> list[float]:
    """``level`` moved by ±``size`` on a cycle of 3 rounds: a series' own noise."""
    return [level * (1 + size * ((i + phase) % 3 - 1)) for i in range(ROUNDS)]


def with_host(values: list[float], better: str) -> list[float]:
    """The host's slow rounds: a time grows, a throughput falls."""
    return [v * h if better == "lower" else v / h for v, h in zip(values, HOST, strict=True)]


def recording(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"rounds": ROUNDS, "series": list(entries)}


def by_name(found: list[Any]) -> dict[str, Any]:
    return {s.name.split("/")[1]: s for s in found}


def test_a_slow_host_shared_by_every_series_is_taken_off(shared: ModuleType) -> None:
    """Times and throughputs slowed by the same rounds: what is left is each one's own wobble."""
    data = recording(
        series("a", "lower", with_host(wobble(100.0, 0.01), "lower")),
        series("b", "higher", with_host(wobble(5000.0, 0.01, 1), "higher")),
        series("c", "lower", with_host(wobble(7.0, 0.01, 2), "lower")),
    )
    found = by_name(shared.shared_noise(data, shared.REFERENCES["all"]))
    for name in "abc":
        assert found[name].own > 0.05
        assert found[name].without_shared < 0.03
    assert "quieter: 3, louder: 0" in shared.summary(list(found.values()))


def test_noise_of_a_series_own_is_not_taken_off(shared: ModuleType) -> None:
    """Quiet other series give a flat reference: the noisy one stays as noisy as it is."""
    noisy = with_host(wobble(100.0, 0.0), "lower")
    data = recording(
        series("noisy", "lower", noisy),
        series("quiet1", "lower", wobble(50.0, 0.002)),
        series("quiet2", "higher", wobble(900.0, 0.002, 1)),
    )
    found = by_name(shared.shared_noise(data, shared.REFERENCES["all"]))
    assert found["noisy"].without_shared == pytest.approx(found["noisy"].own, rel=0.2)
    assert found["noisy"].own > 0.05


def test_a_series_is_never_its_own_reference(shared: ModuleType) -> None:
    """With one other, flat series as the reference the noisy one keeps all its noise; were it
    in its own reference (the median of two), half of it would go."""
    data = recording(
        series("noisy", "lower", with_host(wobble(100.0, 0.0), "lower")),
        series("flat", "lower", [40.0] * ROUNDS),
    )
    found = by_name(shared.shared_noise(data, shared.REFERENCES["all"]))
    assert found["noisy"].without_shared == pytest.approx(found["noisy"].own)


def test_the_os_reference_reads_only_the_series_measured_on_the_os(shared: ModuleType) -> None:
    """A LIBXAC series slowed by the host is not the os series' reference."""
    data = recording(
        series("os_time", "lower", with_host(wobble(100.0, 0.01), "lower")),
        series("os_flat", "lower", wobble(30.0, 0.01, 1)),
        series("lib", "lower", with_host(wobble(8.0, 0.01, 2), "lower"), sut="libxac"),
    )
    found = by_name(shared.shared_noise(data, shared.REFERENCES["os"]))
    # os_time's reference is os_flat alone: nothing is taken off.
    assert found["os_time"].without_shared == pytest.approx(found["os_time"].own, rel=0.3)
    # everything = all: lib joins os_time's reference, and the host goes.
    everything = by_name(shared.shared_noise(data, shared.REFERENCES["all"]))
    assert everything["os_time"].without_shared < found["os_time"].without_shared


def test_deviations_count_the_worse_direction(shared: ModuleType) -> None:
    slower = series("t", "lower", [10.0, 10.0, 12.0])
    lower_throughput = series("q", "higher", [10.0, 10.0, 8.0])
    assert shared.worse_deviations(slower)[2] == pytest.approx(math.log(1.2))
    assert shared.worse_deviations(lower_throughput)[2] == pytest.approx(-math.log(0.8))


def test_divided_by_the_reference_a_shared_slow_host_leaves_the_series_flat(
    shared: ModuleType,
) -> None:
    """What changepoint_accuracy.py reads with --data: every point divided by its round's
    reference.  The host's rounds go; a series' own step, which the reference does not
    share, stays."""
    step = [1.0 if i < ROUNDS // 2 else 1.3 for i in range(ROUNDS)]
    stepped = [v * s for v, s in zip(with_host([100.0] * ROUNDS, "lower"), step, strict=True)]
    data = recording(
        series("a", "lower", stepped),
        series("b", "higher", with_host([5000.0] * ROUNDS, "higher")),
        series("c", "lower", with_host([7.0] * ROUNDS, "lower")),
        series("d", "lower", with_host([0.3] * ROUNDS, "lower")),
    )
    divided = {
        e["benchmark"]: e["medians"]
        for e in shared.divided_by_reference(data, shared.REFERENCES["all"])["series"]
    }
    # b's reference is the median of a, c and d: the host's (a's step is one of three).
    # Flat, at a level the host's median sets: deviations are taken from each series' median.
    assert divided["b"] == pytest.approx([divided["b"][0]] * ROUNDS)
    # a's reference is the median of b, c and d, the host alone: a keeps its step only.
    assert [v / divided["a"][0] for v in divided["a"]] == pytest.approx(step)
