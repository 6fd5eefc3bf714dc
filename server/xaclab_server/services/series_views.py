"""Series, points and change points as JSON (the API and the history page)."""

from typing import Any

from sqlalchemy.orm import Session

from xaclab_server.core.config import Settings
from xaclab_server.models import ChangePoint, Series
from xaclab_server.services.detection import detector_options
from xaclab_server.services.edivisive import Options
from xaclab_server.services.reference_view import view_of_series
from xaclab_server.services.sensitivity import Sensitivity, sensitivity
from xaclab_server.services.series import Point, describe, series_points


def series_out(series: Series, machine_name: str) -> dict[str, Any]:
    return {
        "key": series.key,
        "title": describe(series, machine_name),
        "machine_id": series.machine_id,
        "machine": machine_name,
        "epoch": series.epoch,
        "suite": series.suite,
        "benchmark": series.benchmark,
        "metric": series.metric,
        "unit": series.unit,
        "better": series.better,
        "sut": series.sut,
        "params": series.params,
        "last_point_at": series.last_point_at.isoformat(),
        "detected_at": None if series.detected_at is None else series.detected_at.isoformat(),
        # As the last detection measured it (services/sensitivity.py); None: not judged.
        "noise_percent": None if series.noise is None else series.noise * 100,
        "noise_points": series.noise_points,
        "history": f"/series/{series.key}",
    }


def point_out(point: Point) -> dict[str, Any]:
    return {
        "run_id": point.run_id,
        "at": point.at.isoformat(),
        "value": point.value,
        "revision": point.revision,
        "result_ids": list(point.result_ids),
        "flagged": point.flagged,
        "bisection_id": point.bisection_id,
    }


# What each view of a series is (services/reference_view.py), for people.
VIEW_WORDS = {
    "series": "the series itself",
    "relative": "the series against the same runs' other configurations (the host's speed "
    "in each run taken off)",
}


def change_numbers(change: ChangePoint) -> dict[str, Any]:
    """A change point's size with what makes it doubtful, in percent."""
    return {
        "percent": change.change * 100,
        "low_percent": None if change.change_low is None else change.change_low * 100,
        "high_percent": None if change.change_high is None else change.change_high * 100,
        "p_value": change.p_value,
        "noise_percent": change.noise * 100,
        "mean_before": change.mean_before,
        "mean_after": change.mean_after,
        "points_before": change.points_before,
        "points_after": change.points_after,
        "view": change.view,
        "view_words": VIEW_WORDS.get(change.view, change.view),
    }


def change_point_out(change: ChangePoint) -> dict[str, Any]:
    return {
        "id": change.id,
        "before_run_id": change.before_run_id,
        "after_run_id": change.after_run_id,
        "before_at": change.before_at.isoformat(),
        "after_at": change.after_at.isoformat(),
        "before_revision": change.before_revision,
        "after_revision": change.after_revision,
        "change": change_numbers(change),
        "direction": change.direction,
        "state": change.state,
        "withdrawn": change.withdrawn_at is not None,
        "alert": f"/alerts/{change.id}",
    }


def sensitivity_out(found: Sensitivity, options: Options) -> dict[str, Any]:
    """What a series can show, in percent (services/sensitivity.py)."""
    return {
        "points": found.points,
        "noise_percent": None if found.noise is None else found.noise * 100,
        "noise_known_to_percent": None if found.noise is None else found.noise_known_to * 100,
        "noise_not_a_bell": found.not_a_bell,
        "smallest_step_percent": [
            {"points_after": after, "percent": step * 100}
            for after, step in sorted(found.smallest.items())
        ],
        "not_judged": found.reason,
        "window": options.window,
        "max_pvalue": options.max_pvalue,
    }


def series_judgement(
    *, session: Session, series: Series, changes: list[ChangePoint], settings: Settings
) -> dict[str, Any]:
    """What the detector reads of a series, as the series page and the API show it:
    ``sensitivity``, what the series can show (its newest ``change_history`` points,
    bisection runs left out, cut at the change points it still finds), and ``view``, those
    points against the same runs' other configurations (None where the series has no view
    or views are off: services/reference_view.py)."""
    points = series_points(session=session, series_id=series.id, limit=settings.change_history)
    view = (
        view_of_series(session=session, series=series, points=points)
        if settings.change_views
        else None
    )
    return {
        "sensitivity": _sensitivity(points, view, changes, settings),
        "view": None if view is None else _view_out(points, view),
    }


def _sensitivity(
    points: list[Point], view: list[float] | None, changes: list[ChangePoint], settings: Settings
) -> dict[str, Any]:
    options = detector_options(settings)
    position = {p.run_id: i for i, p in enumerate(points)}
    cuts = [
        position[c.after_run_id]
        for c in changes
        if c.withdrawn_at is None and c.after_run_id in position
    ]
    found = sensitivity([p.value for p in points], cuts, options)
    judged_in = "series"
    if view is not None:
        # The quieter view shows the smaller steps (services/detection.py keeps its noise).
        in_view = sensitivity(view, cuts, options)
        if in_view.noise is not None and (found.noise is None or in_view.noise < found.noise):
            found, judged_in = in_view, "relative"
    return {
        **sensitivity_out(found, options),
        "judged_in": judged_in,
        "judged_in_words": VIEW_WORDS[judged_in],
        "raw_max_pvalue": settings.change_raw_max_pvalue,
    }


def _view_out(points: list[Point], view: list[float]) -> dict[str, Any]:
    """The view's points, in the series' unit: each run's point with the host's speed in
    that run (what its other configurations show) taken off."""
    return {
        "words": VIEW_WORDS["relative"],
        "points": [
            {"run_id": p.run_id, "at": p.at.isoformat(), "value": v}
            for p, v in zip(points, view, strict=True)
        ],
    }
