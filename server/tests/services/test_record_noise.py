"""The noise recorder (bench/record_noise.py) keeps every run of a round, so that single
runs and the best of several are measured on one recording."""

from types import ModuleType

import pytest

from tests.bench_modules import load_bench


@pytest.fixture(scope="module")
def recorder() -> ModuleType:
    return load_bench("record_noise")


def _result(**extra: object) -> dict[str, object]:
    return {
        "suite": "s",
        "benchmark": "b",
        "sut": "os",
        "metric": "m",
        "unit": "us",
        "better": "lower",
        "params": {"n": 1},
        **extra,
    }


def test_a_watch_result_gives_every_runs_median(recorder: ModuleType) -> None:
    watched = _result(samples=[2.0], env={"best_of": {"run_medians": [3.0, None, 2.0]}})
    assert recorder.run_medians(watched) == [3.0, 2.0]
    assert recorder.run_medians(_result(samples=[1.0, 4.0, 2.0])) == [2.0]
    assert recorder.run_medians(_result(histogram={})) == []


def test_best_of_is_not_part_of_the_recordings_series(recorder: ModuleType) -> None:
    single = _result(samples=[1.0])
    best = _result(samples=[1.0], params={"n": 1, "best_of": 3})
    assert recorder.series_key(single) == recorder.series_key(best)


def test_the_corpus_keeps_the_first_run_and_every_run(recorder: ModuleType) -> None:
    key = recorder.series_key(_result(samples=[1.0]))
    rounds = [{key: [3.0, 2.0, 4.0]}, {key: [5.0, 6.0, 7.0]}, {}]
    document = recorder.corpus(rounds, ("s",), planned=3, min_points=2, profile="watch")
    (entry,) = document["series"]
    assert entry["medians"] == [3.0, 5.0]
    assert entry["pass_medians"] == [[3.0, 2.0, 4.0], [5.0, 6.0, 7.0]]
    assert document["profile"] == "watch"
    assert recorder.corpus(rounds, ("s",), planned=3, min_points=3)["series"] == []
    one_run = recorder.corpus([{key: [3.0]}, {key: [4.0]}], ("s",), planned=2, min_points=2)
    assert "pass_medians" not in one_run["series"][0]
