"""Change-point detection on one series, and keeping its change points up to date.

After each upload the watcher (:mod:`.watcher`) runs :func:`detect_series` on
every series the upload touched: E-Divisive means (:mod:`.edivisive`) over the
series' newest ``change_history`` points in time order (bisection runs left
out), then the stored change points are brought in line with what it found:

- a found change whose first point after it is the run a stored one names is
  that one (its numbers are refreshed); so is one whose first run after it
  moved by at most :data:`MOVE_TOLERANCE` points, in the same direction
  (E-Divisive may move a change by a point or two as points arrive);
- a found change that matches none is new: a new alert;
- a stored one that was not found again is withdrawn (``withdrawn_at``), and
  comes back if a later pass finds it at the same run again.

A timing series has two views (:mod:`.reference_view`): the series itself,
judged at ``change_raw_max_pvalue``, and the series against its runs' other
configurations, judged at ``change_max_pvalue``; a series without the second
view is judged at ``change_max_pvalue``.  A change the second view finds within
:data:`MOVE_TOLERANCE` points of one the first found is that one; each change
point keeps the view it was found in (``view``), and its numbers are that
view's.

Each change point's size is (mean after - mean before) / |mean before| over
the points between its neighbouring change points, with a 95 % percentile
bootstrap interval (:func:`.significance.bootstrap_ratio`, fixed seed; none
where the mean before may be zero); its direction is the shift's.
"""

import math
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from xaclab_server.core.config import Settings
from xaclab_server.models import ChangePoint, Series
from xaclab_server.services import edivisive
from xaclab_server.services.edivisive import Split
from xaclab_server.services.reference_view import SiblingCache, view_of_series
from xaclab_server.services.sensitivity import judged_noise
from xaclab_server.services.series import Point, series_points
from xaclab_server.services.significance import bootstrap_ratio

MOVE_TOLERANCE = 2
BOOTSTRAP_RESAMPLES = 1000


def detector_options(settings: Settings) -> edivisive.Options:
    return edivisive.Options(
        max_pvalue=settings.change_max_pvalue,
        min_change=settings.change_min_percent / 100,
        noise_factor=settings.change_noise_factor,
        min_points=settings.change_min_points,
        window=settings.change_window,
        test=settings.change_test,
    )


@dataclass(frozen=True, slots=True)
class Views:
    """How a series is judged: ``options`` for the view against the other configurations
    (and for a series without it), ``raw_max_pvalue`` for the series itself beside it;
    ``enabled`` False judges the series alone."""

    options: edivisive.Options
    raw_max_pvalue: float
    enabled: bool = True


def detector_views(settings: Settings) -> Views:
    return Views(
        options=detector_options(settings),
        raw_max_pvalue=settings.change_raw_max_pvalue,
        enabled=settings.change_views,
    )


@dataclass(frozen=True, slots=True)
class Found:
    split: Split
    view: str  # "series": the series itself; "relative": against its runs' other configurations
    values: list[float]  # the view's points, which the split's numbers are of


def detect_views(readings: list[float], relative: list[float] | None, views: Views) -> list[Found]:
    """The changes found in the series (``readings``) and in its view against its runs' other
    configurations (``relative``, None where it has none), in order of their index."""
    if relative is None or not views.enabled:
        return [Found(s, "series", readings) for s in edivisive.detect(readings, views.options)]
    strict = replace(views.options, max_pvalue=views.raw_max_pvalue)
    found = [Found(s, "series", readings) for s in edivisive.detect(readings, strict)]
    for split in edivisive.detect(relative, views.options):
        if all(abs(split.index - f.split.index) > MOVE_TOLERANCE for f in found):
            found.append(Found(split, "relative", relative))
    return sorted(found, key=lambda f: f.split.index)


@dataclass(frozen=True, slots=True)
class Detection:
    new: list[ChangePoint]
    kept: list[ChangePoint]
    withdrawn: list[ChangePoint]


def detect_series(
    *,
    session: Session,
    series: Series,
    views: Views,
    history: int,
    now: datetime,
    siblings: SiblingCache | None = None,
) -> Detection:
    """Detect on ``series`` and update its change points; flushes, does not commit.
    ``siblings`` keeps what the view read for the next series of the same runs."""
    points = series_points(session=session, series_id=series.id, limit=history)
    readings = [p.value for p in points]
    relative = (
        view_of_series(session=session, series=series, points=points, cache=siblings)
        if views.enabled
        else None
    )
    found_changes = detect_views(readings, relative, views)
    # What the series can show, kept for the alerts page (services/watch_coverage.py): the
    # quieter view's noise, as that view finds the smaller steps.
    judged = [judged_noise(readings, [f.split.index for f in found_changes])]
    if relative is not None:
        judged.append(judged_noise(relative, [f.split.index for f in found_changes]))
    known = [n for n in judged if n is not None]
    series.noise = min(known) if known else None
    series.noise_points = len(points)
    stored = list(session.scalars(select(ChangePoint).where(ChangePoint.series_id == series.id)))
    position = {p.run_id: i for i, p in enumerate(points)}
    active = [c for c in stored if c.withdrawn_at is None]
    new: list[ChangePoint] = []
    kept: list[ChangePoint] = []
    for finding in found_changes:
        split = finding.split
        values = _values(split, points, finding.values, series.better)
        values["view"] = finding.view
        found = _match(split, points, position, active, str(values["direction"]))
        if found is None:
            found = next((c for c in stored if c.after_run_id == points[split.index].run_id), None)
        if found is None:
            found = ChangePoint(series_id=series.id, detected_at=now, state="open", note="")
            session.add(found)
            new.append(found)
        else:
            kept.append(found)
            if found in active:
                active.remove(found)
        for name, value in values.items():
            setattr(found, name, value)
        found.updated_at = now
        found.withdrawn_at = None
    withdrawn = []
    for change in active:
        # Only what this pass looked at can be withdrawn: a change older than the
        # newest ``history`` points stays as it was.
        if change.after_run_id in position:
            change.withdrawn_at = now
            withdrawn.append(change)
    series.detected_at = now
    session.flush()
    return Detection(new=new, kept=kept, withdrawn=withdrawn)


def _match(
    split: Split,
    points: list[Point],
    position: dict[int, int],
    active: list[ChangePoint],
    direction: str,
) -> ChangePoint | None:
    after_run = points[split.index].run_id
    for change in active:
        if change.after_run_id == after_run:
            return change
    near = [
        (abs(position[c.after_run_id] - split.index), c.id, c)
        for c in active
        if c.after_run_id in position
        and c.direction == direction
        and abs(position[c.after_run_id] - split.index) <= MOVE_TOLERANCE
    ]
    return min(near)[2] if near else None


def _values(
    split: Split, points: list[Point], readings: list[float], better: str
) -> dict[str, object]:
    before = readings[split.start : split.index]
    after = readings[split.index : split.end]
    change = split.change
    # The direction is the shift's, not the ratio's: a negative mean before flips the ratio.
    shift = split.test.mean_after - split.test.mean_before
    worse = shift > 0 if better == "lower" else shift < 0
    mean_before = split.test.mean_before
    low, high = _interval(split, before, after)
    last, first = points[split.index - 1], points[split.index]
    return {
        "before_run_id": last.run_id,
        "after_run_id": first.run_id,
        "before_at": last.at,
        "after_at": first.at,
        "before_revision": last.revision,
        "after_revision": first.revision,
        "points_before": split.test.n_before,
        "points_after": split.test.n_after,
        "mean_before": mean_before,
        "mean_after": split.test.mean_after,
        "change": change if math.isfinite(change) else 0.0,
        "change_low": low,
        "change_high": high,
        "p_value": split.p,
        "noise": split.noise / abs(mean_before) if mean_before else 0.0,
        "direction": "regression" if worse else "improvement",
    }


def _interval(split: Split, before: list[float], after: list[float]) -> tuple[float | None, ...]:
    """The 95 % bootstrap interval of ``split.change``; none where the mean before is
    within two standard errors of zero (its resamples would change sign, and a change
    relative to a mean that may be zero has no size to speak of)."""
    test = split.test
    if abs(test.mean_before) <= 2 * test.sd_before / math.sqrt(test.n_before):
        return None, None
    interval = bootstrap_ratio(before, after, statistic="mean", resamples=BOOTSTRAP_RESAMPLES)
    if not (math.isfinite(interval.low) and math.isfinite(interval.high)):
        return None, None
    if test.mean_before > 0:
        return interval.low - 1, interval.high - 1
    return 1 - interval.high, 1 - interval.low  # (a - b) / |b| = 1 - a / b for b < 0
