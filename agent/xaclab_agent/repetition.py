"""Adaptive repetition: run a suite again until every median is precise, or enough runs.

A profile may declare ``repeat_until`` (docs/validity.md, "Adaptive
repetition"): the agent runs the suite's programs, pools each result's
samples with those of the same result from the earlier runs (same
benchmark, sut, metric, unit and params), and stops when the 95% interval of
every pooled median is within ``median_ci_percent`` of it, or after
``max_runs`` runs, or when a run fails.  A result whose median is 0 has no
relative interval and does not hold the others back.

Each pooled result carries ``env.repetition``: the rule, how many runs were
made, why they stopped, and the interval its median reached.  Its
``hygiene`` says whether any run was noisy.  Pooled samples stay raw up to
100,000 and become a histogram above that (docs/result-format.md); pooled
histograms add their buckets.
"""

from __future__ import annotations

import json
import math
import statistics
import struct
import time
from collections.abc import Callable
from typing import Any

from xaclab_contracts.histogram import RAW_MAX, SCHEME, SHIFT, bucket_index
from xaclab_contracts.precision import half_width_percent, median_interval_ranks
from xaclab_contracts.suites import RepeatUntil

from xaclab_agent.progress import Progress
from xaclab_agent.runner import RunOutcome

# One run of the suite's programs: (progress callback, seconds left or None) -> its outcome.
RunOnce = Callable[[Callable[[Progress], None], float | None], RunOutcome]


def result_key(result: dict[str, Any]) -> str:
    return json.dumps(
        [result.get(k) for k in ("benchmark", "sut", "metric", "unit", "params")], sort_keys=True
    )


def run_repeated(
    run_once: RunOnce,
    rule: RepeatUntil,
    *,
    on_progress: Callable[[Progress], None],
    timeout: float | None,
    stopping: Callable[[], bool],
) -> RunOutcome:
    """Run until precise, ``rule.max_runs`` runs, a failure, or a stop; pool the results."""
    deadline = None if timeout is None else time.monotonic() + timeout
    runs: list[list[dict[str, Any]]] = []
    outcome: RunOutcome | None = None
    stopped = "max_runs"
    for index in range(rule.max_runs):
        left = None if deadline is None else max(deadline - time.monotonic(), 0.001)
        outcome = run_once(scaled_progress(on_progress, index, rule.max_runs), left)
        runs.append(outcome.results)
        if not outcome.succeeded:
            stopped = "failed"
            break
        pooled = pool(runs)
        if all(_precise(r, rule) for r in pooled):
            stopped = "precise"
            break
        if stopping() or (deadline is not None and time.monotonic() >= deadline):
            stopped = "stopped"
            break
    assert outcome is not None
    results = [_with_repetition(r, rule, len(runs), stopped) for r in pool(runs)]
    message = outcome.message if stopped == "failed" else _summary(results, len(runs), stopped)
    return RunOutcome(outcome.succeeded, message, results, outcome.cancelled)


def pool(runs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One result per key, in order of first appearance, its samples those of every run."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for results in runs:
        for result in results:
            groups.setdefault(result_key(result), []).append(result)
    return [_pooled(parts) for parts in groups.values()]


def _pooled(parts: list[dict[str, Any]]) -> dict[str, Any]:
    first = dict(parts[0])
    first["env"] = _pooled_env([p.get("env", {}) for p in parts])
    if len(parts) == 1:
        return first
    raw = [x for p in parts for x in p.get("samples", [])]
    if all("samples" in p for p in parts) and len(raw) <= RAW_MAX:
        first["samples"] = raw
        return first
    first.pop("samples", None)
    first["histogram"] = _merged_histogram(parts)
    return first


def _pooled_env(envs: list[dict[str, Any]]) -> dict[str, Any]:
    env = dict(envs[0])
    hygienes = [e["hygiene"] for e in envs if isinstance(e.get("hygiene"), dict)]
    if hygienes:
        noisy_runs = sum(h.get("noisy") is True for h in hygienes)
        env["hygiene"] = {
            **hygienes[0],
            "after": hygienes[-1].get("after", {}),
            "noisy": noisy_runs > 0,
            "noisy_runs": noisy_runs,
        }
    return env


def _merged_histogram(parts: list[dict[str, Any]]) -> dict[str, Any]:
    counts: dict[int, int] = {}
    sums: list[float] = []
    squares: list[float] = []
    lows: list[float] = []
    highs: list[float] = []
    for part in parts:
        if "histogram" in part:
            h = part["histogram"]
            for index, count in h["buckets"]:
                counts[index] = counts.get(index, 0) + count
            sums.append(h["sum"])
            squares.append(h["sum_squares"])
            lows.append(h["min"])
            highs.append(h["max"])
            continue
        samples = part["samples"]
        for x in samples:
            index = bucket_index(x)
            counts[index] = counts.get(index, 0) + 1
        sums.append(math.fsum(samples))
        squares.append(math.fsum(x * x for x in samples))
        lows.append(min(samples))
        highs.append(max(samples))
    return {
        "scheme": SCHEME,
        "count": sum(counts.values()),
        "min": min(lows),
        "max": max(highs),
        "sum": math.fsum(sums),
        "sum_squares": math.fsum(squares),
        "buckets": [[i, counts[i]] for i in sorted(counts)],
    }


def result_median(result: dict[str, Any]) -> float | None:
    """The median of the result's samples or histogram; None when it has neither."""
    if "histogram" in result:
        h = result["histogram"]
        n = int(h["count"])
        if n < 1:
            return None
        return (_histogram_value(h, (n + 1) // 2) + _histogram_value(h, n // 2 + 1)) / 2
    samples = result.get("samples")
    if not samples:
        return None
    return float(statistics.median(samples))


def _interval(result: dict[str, Any]) -> tuple[float, float, float, float | None] | None:
    """(low, high, median, half-width %) of the 95% interval of the result's median, or None
    when it has too few samples for one."""
    if "histogram" in result:
        h = result["histogram"]
        n = h["count"]
        ranks = median_interval_ranks(n)
        if ranks is None:
            return None
        low, high = (_histogram_value(h, r) for r in ranks)
    else:
        ordered = sorted(result["samples"])
        n = len(ordered)
        ranks = median_interval_ranks(n)
        if ranks is None:
            return None
        low, high = ordered[ranks[0] - 1], ordered[ranks[1] - 1]
    median = result_median(result)
    assert median is not None, "a result with an interval has a median"
    return low, high, median, half_width_percent(low, high, median)


def _histogram_value(histogram: dict[str, Any], rank: int) -> float:
    """The midpoint of the bucket holding ``rank`` (1-based), clamped to [min, max]; rank 1
    is the minimum and the last rank the maximum (as the server reads it)."""
    if rank == 1:
        return float(histogram["min"])
    if rank == histogram["count"]:
        return float(histogram["max"])
    seen = 0
    for index, count in histogram["buckets"]:
        seen += count
        if seen >= rank:
            magnitude = -1 - index if index < 0 else index
            low = struct.unpack("<d", struct.pack("<Q", magnitude << SHIFT))[0]
            high = struct.unpack("<d", struct.pack("<Q", (magnitude + 1) << SHIFT))[0]
            mid = (low + high) / 2 * (-1 if index < 0 else 1)
            return float(min(max(mid, histogram["min"]), histogram["max"]))
    return float(histogram["max"])


def _precise(result: dict[str, Any], rule: RepeatUntil) -> bool:
    """Precise enough; a median of 0 has no relative interval and counts as precise."""
    found = _interval(result)
    if found is None:
        return False
    width = found[3]
    return found[2] == 0 or (width is not None and width <= rule.median_ci_percent)


def _with_repetition(
    result: dict[str, Any], rule: RepeatUntil, runs: int, stopped: str
) -> dict[str, Any]:
    found = _interval(result)
    env = dict(result.get("env", {}))
    env["repetition"] = {
        "median_ci_percent_wanted": rule.median_ci_percent,
        "max_runs": rule.max_runs,
        "runs": runs,
        "stopped": stopped,
        "median_ci": None if found is None else [found[0], found[1]],
        "median_ci_percent": None if found is None else found[3],
    }
    return {**result, "env": env}


def _summary(results: list[dict[str, Any]], runs: int, stopped: str) -> str:
    widths = [r["env"]["repetition"]["median_ci_percent"] for r in results]
    known = [w for w in widths if w is not None]
    worst = f"; widest interval ±{max(known):.1f}%" if known else ""
    why = {"precise": "every median precise", "max_runs": "run limit reached"}.get(stopped, stopped)
    return f"{len(results)} results after {runs} runs ({why}){worst}"


def scaled_progress(
    on_progress: Callable[[Progress], None], index: int, count: int, of: str = "of at most"
) -> Callable[[Progress], None]:
    """Run ``index``'s progress as a share of ``count`` runs: "run 2 of at most 6: ..."."""

    def report(progress: Progress) -> None:
        fraction = (index + progress.fraction) / count
        on_progress(Progress(fraction, f"run {index + 1} {of} {count}: {progress.message}"[:500]))

    return report
