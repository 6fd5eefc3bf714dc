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

Each change point's size is (mean after - mean before) / |mean before| over
the points between its neighbouring change points, with a 95 % percentile
bootstrap interval (:func:`.significance.bootstrap_ratio`, fixed seed; none
where the mean before may be zero); its direction is the shift's.
"""

import math
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from xaclab_server.core.config import Settings
from xaclab_server.models import ChangePoint, Series
from xaclab_server.services import edivisive
from xaclab_server.services.edivisive import Split
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
class Detection:
    new: list[ChangePoint]
    kept: list[ChangePoint]
    withdrawn: list[ChangePoint]


def detect_series(
    *,
    session: Session,
    series: Series,
    options: edivisive.Options,
    history: int,
    now: datetime,
) -> Detection:
    """Detect on ``series`` and update its change points; flushes, does not commit."""
    points = series_points(session=session, series_id=series.id, limit=history)
    readings = [p.value for p in points]
    splits = edivisive.detect(readings, options)
    # What the series can show, kept for the alerts page (services/watch_coverage.py).
    series.noise = judged_noise(readings, [s.index for s in splits])
    series.noise_points = len(points)
    stored = list(session.scalars(select(ChangePoint).where(ChangePoint.series_id == series.id)))
    position = {p.run_id: i for i, p in enumerate(points)}
    active = [c for c in stored if c.withdrawn_at is None]
    new: list[ChangePoint] = []
    kept: list[ChangePoint] = []
    for split in splits:
        values = _values(split, points, series.better)
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


def _values(split: Split, points: list[Point], better: str) -> dict[str, object]:
    before = [p.value for p in points[split.start : split.index]]
    after = [p.value for p in points[split.index : split.end]]
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
