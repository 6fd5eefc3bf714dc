"""Best of several runs: a profile's ``best_of`` rule (docs/change-points.md, "Best of
several runs").

The agent runs the suite's programs ``runs`` times, each run its own processes, and
keeps of each result (same benchmark, sut, metric, unit and params) the run whose
median is best: the lowest, or the highest where the result says higher is better.
Why: on a shared machine a process now and then runs 20-50 % slower for its whole
life, and whether the next process does is close to a coin toss of its own.  One
run's median carries that slowness into a series; the best of three carries it only
when all three were slow.

A kept result is its run's result unchanged (samples and all), plus:

- ``params.best_of``: how many runs it is the best of.  It is a param, so it is part of
  the result's series and comparisons: the best of three runs is a lower statistic than
  one run's median, and the two never share a series;
- ``env.best_of``: the runs made, which one was kept (1-based), every run's median of
  this result in run order (``None`` where a run did not produce it), and the pause
  between the runs (``gap_s``).

Runs back to back share a slow spell of the machine more often than runs apart (a
spell lasts seconds to minutes), so a rule may space them by ``gap_s`` seconds.

A result only one run produced is kept as a single run, without ``params.best_of``.
A failed run stops the repetition; what the runs before it measured is kept.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from xaclab_contracts.suites import BestOf

from xaclab_agent.progress import Progress
from xaclab_agent.repetition import RunOnce, result_key, result_median, scaled_progress
from xaclab_agent.results import MAX_PARAMS
from xaclab_agent.runner import RunOutcome

log = logging.getLogger(__name__)


def run_best_of(
    run_once: RunOnce,
    rule: BestOf,
    *,
    on_progress: Callable[[Progress], None],
    timeout: float | None,
    stopping: Callable[[], bool],
    clock: Callable[[], float],
    wait: Callable[[float], bool],
) -> RunOutcome:
    """Run ``rule.runs`` times, ``rule.gap_s`` apart (fewer after a failure or a stop), and
    keep each result's best run.  ``wait(seconds)`` pauses, and says whether a stop came."""
    deadline = None if timeout is None else clock() + timeout
    made: list[list[dict[str, Any]]] = []
    outcome: RunOutcome | None = None
    for index in range(rule.runs):
        if index and rule.gap_s > 0:
            on_progress(
                Progress(
                    index / rule.runs,
                    f"run {index} of {rule.runs} done; the next in {rule.gap_s:g} s, so that "
                    "one slow spell of the machine does not catch every run",
                )
            )
            pause = rule.gap_s if deadline is None else min(rule.gap_s, deadline - clock())
            if wait(max(pause, 0.0)) or (deadline is not None and clock() >= deadline):
                break
        left = None if deadline is None else max(deadline - clock(), 0.001)
        outcome = run_once(scaled_progress(on_progress, index, rule.runs, of="of"), left)
        made.append(outcome.results)
        if not outcome.succeeded or stopping():
            break
        if deadline is not None and clock() >= deadline:
            break
    assert outcome is not None
    results = keep_best(made, rule.gap_s)
    message = outcome.message
    if outcome.succeeded:
        message = f"{len(results)} results, each the best of {len(made)} runs"
        if rule.gap_s > 0 and len(made) > 1:
            message += f" {rule.gap_s:g} s apart"
    return RunOutcome(outcome.succeeded, message, results, outcome.cancelled)


def keep_best(made: list[list[dict[str, Any]]], gap_s: float = 0.0) -> list[dict[str, Any]]:
    """Each result's best run, in order of first appearance, marked as such; ``gap_s``, the
    pause between the runs, is recorded beside them."""
    order: list[str] = []
    by_run: dict[str, list[dict[str, Any] | None]] = {}
    for index, results in enumerate(made):
        for result in results:
            key = result_key(result)
            if key not in by_run:
                order.append(key)
                by_run[key] = [None] * len(made)
            by_run[key][index] = result
    return [_best(by_run[key], len(made), gap_s) for key in order]


def _best(runs: list[dict[str, Any] | None], made: int, gap_s: float) -> dict[str, Any]:
    medians = [None if r is None else result_median(r) for r in runs]
    known = {i: m for i, m in enumerate(medians) if m is not None}
    first = next(r for r in runs if r is not None)
    if len(known) < 2:
        return first
    pick = max if first.get("better") == "higher" else min
    kept = pick(known, key=known.__getitem__)
    chosen = runs[kept]
    assert chosen is not None
    params = dict(chosen.get("params", {}))
    if "best_of" not in params and len(params) >= MAX_PARAMS:
        log.warning("result already has %d params; kept its first run alone", MAX_PARAMS)
        return first
    params["best_of"] = len(known)
    env = dict(chosen.get("env", {}))
    env["best_of"] = {
        "runs": made,
        "kept_run": kept + 1,
        "run_medians": medians,
        "gap_s": gap_s,
    }
    return {**chosen, "params": params, "env": env}
