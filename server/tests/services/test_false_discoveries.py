"""False discoveries: two runs drawn from one distribution, 60 matched results each.

Tested pair by pair at α = 0.05, about 3 of 60 pairs come out "significantly
different" by chance alone; with Benjamini–Hochberg across the comparison's
pairs (services/verdicts.py) at most one may, in at least 95% of the seeds.
The seeds are fixed, so the test always sees the same draws.
"""

import math
from typing import Any

import numpy as np
from fastapi.testclient import TestClient

from tests.helpers import result_record
from tests.reproduction_helpers import register_machine, store_results
from tests.validity_helpers import FINGERPRINT, env
from xaclab_server.models import Result
from xaclab_server.services import significance, verdicts
from xaclab_server.services.pairs import Pair, Row, measure
from xaclab_server.services.statistics import pack_samples

PAIRS = 60
SAMPLES = 10
SEEDS = range(100)


def _draw(rng: np.random.Generator) -> list[float]:
    # Time per page around 10 us with 2% spread: every result is clean (no flag).
    return [float(x) for x in rng.lognormal(math.log(10.0), 0.02, SAMPLES)]


def _row(result_id: int, benchmark: str, samples: list[float]) -> Row:
    result = Result(
        id=result_id,
        suite="page-touch",
        benchmark=benchmark,
        sut="libxac",
        metric="time_per_page",
        unit="us",
        better="lower",
        params={},
        samples=pack_samples(samples),
        histogram=None,
        flags={},
    )
    return Row(result, {})


def _compare(seed: int) -> list[Pair]:
    """One comparison of two runs from one distribution, as compare_runs pairs them."""
    rng = np.random.default_rng(seed)
    pairs = []
    for k in range(PAIRS):
        a = _row(seed * 1000 + 2 * k, f"b{k}", _draw(rng))
        b = _row(seed * 1000 + 2 * k + 1, f"b{k}", _draw(rng))
        pairs.append(measure([a], [b], "median"))
    return verdicts.finish(pairs)


def _uncorrected(pair: Pair) -> bool:
    """What a pair was called before: its own p < 0.05 and the interval excluding 1."""
    interval = significance.RatioInterval(pair.ratio, pair.ci_low, pair.ci_high)
    return significance.verdict(q=pair.p_value, interval=interval, better=pair.better)[0]


def test_at_most_one_false_discovery_in_95_percent_of_seeds() -> None:
    called = []
    uncorrected = []
    for seed in SEEDS:
        pairs = _compare(seed)
        assert len(pairs) == PAIRS and not any(p.in_doubt for p in pairs)
        called.append(sum(p.significant for p in pairs))
        uncorrected.append(sum(_uncorrected(p) for p in pairs))
    within = sum(c <= 1 for c in called)
    assert within >= 0.95 * len(SEEDS), called
    # Without the correction the same draws give false discoveries in most comparisons:
    # the property above is the correction's doing, not the data's.
    assert sum(u >= 2 for u in uncorrected) > len(SEEDS) / 4, uncorrected


def test_q_values_are_benjamini_hochberg() -> None:
    """R's p.adjust(c(0.01, 0.04, 0.03, 0.005), method = "BH") = 0.02 0.04 0.04 0.02."""
    q = significance.benjamini_hochberg([0.01, 0.04, 0.03, 0.005])
    assert [round(x, 10) for x in q] == [0.02, 0.04, 0.04, 0.02]
    assert significance.benjamini_hochberg([]) == []
    assert significance.benjamini_hochberg([0.9, 0.5]) == [0.9, 0.9]


def _upload(client: TestClient, machine_id: int, agent: dict[str, str], rng: Any) -> int:
    records = [
        result_record(params={"n": k, "access": "read"}, samples=_draw(rng), env=env())
        for k in range(PAIRS)
    ]
    return store_results(client, machine_id, agent, "page-touch", records)


def test_the_api_applies_the_correction_to_two_runs_from_one_distribution(
    client: TestClient,
) -> None:
    """The same property through uploads and GET /api/v1/compare, for a few seeds."""
    machine_id, agent = register_machine(client, "lab-null", FINGERPRINT)
    for seed in range(3):
        rng = np.random.default_rng(1000 + seed)
        a, b = _upload(client, machine_id, agent, rng), _upload(client, machine_id, agent, rng)
        out = client.get("/api/v1/compare", params={"kind": "runs", "a": a, "b": b}).json()
        assert len(out["pairs"]) == PAIRS and out["in_doubt"] == 0
        assert out["significant"] <= 1
        q = significance.benjamini_hochberg([p["p_value"] for p in out["pairs"]])
        assert [p["q_value"] for p in out["pairs"]] == q
