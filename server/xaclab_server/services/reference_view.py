"""A timing series' second view: each point against the same runs' other configurations.

A lab host has slow hours: another guest's job, a busy disk, a clock that
drifts.  They slow every program of a run alike, and on the lab's recorded
noise they are most of a timing series' run-to-run noise (``server/bench/
shared_noise.py``).  Taking off what a run's *other* configurations of the same
program show leaves what is this configuration's own: on the two recordings of
the watch profile, the median noise of the series with a view went from 3.1 % to
2.4 % and from 4.4 % to 2.1 %, and the detector's F1 on steps of at least 5 %
from 0.870 and 0.859 to 0.903 and 0.929 with both views watched
(docs/change-points.md, "Two views of a series").

The **view** of a series whose unit is a time or a rate (:data:`TIMING_UNITS`):

- its **siblings** are the other timing series of its machine epoch and suite
  whose configuration (system and parameters) differs: those of the same
  benchmark program when at least :data:`MIN_CONFIGS` configurations have points
  in the runs judged, else those of the whole suite; else it has no view.  Other
  metrics of its own configuration never count: they are the same measurement
  (a throughput and its latency), and a real change moves them together;
- a sibling's **deviation** in a run is log(point / its median over the runs
  judged), signed so that worse is positive; a configuration's is the median of
  its series' deviations in that run;
- a run's **reference** is the median deviation of the configurations with a
  point in it (0 where none has one); the view's point is the series' point
  divided by exp(reference), in the direction that takes the slowness off.

A change that moves every configuration of a program alike (a kernel update, a
libxac commit) moves the reference too and cancels in the view: the series
itself is watched as well, at a stricter p (:mod:`.detection`).  Counts, bytes
and ratios are not slowed by a slow host and have no view.
"""

import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from xaclab_server.models import Result, Series
from xaclab_server.services.series import Point, series_points

TIMING_UNITS = frozenset({"ns", "us", "ms", "s", "ops/s"})
MIN_CONFIGS = 3  # fewer: one sibling's own change would show as this series' change


def has_view(unit: str) -> bool:
    return unit in TIMING_UNITS


def worse_sign(better: str) -> float:
    """+1 where a higher point is worse (a time), -1 where a lower one is (a rate)."""
    return 1.0 if better == "lower" else -1.0


def configuration(sut: str, params: dict[str, Any]) -> str:
    """What a run of a program measured with: its system and parameters."""
    return json.dumps([sut, params], sort_keys=True)


@dataclass(frozen=True, slots=True)
class Sibling:
    """One timing series of the same machine epoch and suite: its points by run."""

    benchmark: str
    configuration: str
    better: str
    points: dict[int, float]  # run id -> point


def relative_view(
    *,
    benchmark: str,
    configuration: str,
    better: str,
    runs: Sequence[int],
    values: Sequence[float],
    siblings: Sequence[Sibling],
) -> list[float] | None:
    """The series' points (``values``, one per run in ``runs``) against the same runs'
    other configurations; None where it has no view (too few configurations)."""
    others = [s for s in siblings if s.configuration != configuration]
    judged = set(runs)
    for group in (
        [s for s in others if s.benchmark == benchmark],
        others,
    ):
        references = _references(group, judged)
        if references is not None:
            sign = worse_sign(better)
            return [
                v / math.exp(sign * references.get(r, 0.0))
                for r, v in zip(runs, values, strict=True)
            ]
    return None


def _references(group: Sequence[Sibling], runs: set[int]) -> dict[int, float] | None:
    """Each run's reference from ``group``, or None with fewer than MIN_CONFIGS
    configurations that have points in ``runs``."""
    by_configuration: dict[str, dict[int, list[float]]] = {}
    for sibling in group:
        deviations = _deviations(sibling, runs)
        if not deviations:
            continue
        per_run = by_configuration.setdefault(sibling.configuration, {})
        for run, deviation in deviations.items():
            per_run.setdefault(run, []).append(deviation)
    if len(by_configuration) < MIN_CONFIGS:
        return None
    of_configurations: dict[int, list[float]] = {}
    for runs_of_configuration in by_configuration.values():
        for run, its_series in runs_of_configuration.items():
            of_configurations.setdefault(run, []).append(statistics.median(its_series))
    return {run: statistics.median(medians) for run, medians in of_configurations.items()}


def _deviations(sibling: Sibling, runs: set[int]) -> dict[int, float]:
    """log(point / median), worse positive, over the sibling's positive points in ``runs``."""
    points = {r: v for r, v in sibling.points.items() if r in runs and v > 0}
    if not points:
        return {}
    middle = statistics.median(points.values())
    sign = worse_sign(sibling.better)
    return {r: sign * math.log(v / middle) for r, v in points.items()}


def view_of_run(
    *, session: Session, series: Series, run_id: int, value: float, history: int
) -> float:
    """A point the detector does not judge (a bisection's run), ``value``, in the view:
    against that run's other configurations, each sibling's deviation taken from its median
    over the series' newest ``history`` points and this run, as the change it tests was
    found.  ``value`` itself where the series has no view."""
    points = [
        p
        for p in series_points(session=session, series_id=series.id, limit=history)
        if p.run_id != run_id
    ]
    runs = [p.run_id for p in points] + [run_id]
    view = relative_view(
        benchmark=series.benchmark,
        configuration=configuration(series.sut, series.params),
        better=series.better,
        runs=runs,
        values=[p.value for p in points] + [value],
        siblings=_read_siblings(session, series, runs),
    )
    # A run no sibling measured has a reference of 0: its value stays as it is.
    return value if view is None else view[-1]


# The siblings read for one machine epoch, suite and set of runs: a watcher pass detects
# many series of one upload, which share them.
SiblingCache = dict[tuple[int, int, str, tuple[int, ...]], list[Sibling]]


def view_of_series(
    *,
    session: Session,
    series: Series,
    points: Sequence[Point],
    cache: SiblingCache | None = None,
) -> list[float] | None:
    """``series``' view over ``points`` (its points the detector judges), from the results
    its siblings have in the same runs; None where it has none.  ``cache`` keeps the
    siblings read for the next series of the same runs (one watcher pass)."""
    if not has_view(series.unit) or not points:
        return None
    runs = [p.run_id for p in points]
    key = (series.machine_id, series.epoch, series.suite, tuple(runs))
    siblings = None if cache is None else cache.get(key)
    if siblings is None:
        siblings = _read_siblings(session, series, runs)
        if cache is not None:
            cache[key] = siblings
    return relative_view(
        benchmark=series.benchmark,
        configuration=configuration(series.sut, series.params),
        better=series.better,
        runs=runs,
        values=[p.value for p in points],
        siblings=siblings,
    )


def _read_siblings(session: Session, series: Series, runs: list[int]) -> list[Sibling]:
    """Every timing series of ``series``' machine epoch and suite (itself too: its
    configuration is left out later) with its points in ``runs``."""
    rows = session.execute(
        select(
            Series.id,
            Series.benchmark,
            Series.sut,
            Series.params,
            Series.better,
            Result.run_id,
            Result.median,
        )
        .join(Result, Result.series_id == Series.id)
        .where(
            Series.machine_id == series.machine_id,
            Series.epoch == series.epoch,
            Series.suite == series.suite,
            Series.unit.in_(TIMING_UNITS),
            Result.run_id.in_(runs),
        )
    ).all()
    grouped: dict[int, tuple[Any, dict[int, list[float]]]] = {}
    for row in rows:
        _first, by_run = grouped.setdefault(row.id, (row, {}))
        by_run.setdefault(row.run_id, []).append(float(row.median))
    return [
        Sibling(
            benchmark=first.benchmark,
            configuration=configuration(first.sut, first.params),
            better=first.better,
            points={run: statistics.median(medians) for run, medians in by_run.items()},
        )
        for first, by_run in grouped.values()
    ]
