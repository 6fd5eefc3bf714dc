"""One series over time (:mod:`.series_keys`): every result of it on its machine, across epochs.

Each point is one result: its median with the 95% interval of the median
(the samples' range below 6 samples), its validity flags, the run it came
from and the libxac revision it measured.  The machine's epochs say where
its identity fingerprint changed: results of different epochs are not
comparable (docs/validity.md).  :func:`change_points` gives the changes of the
series' level that the change-point detector found (docs/change-points.md):
those of the detector's series (one per epoch) that the history's results
belong to.
"""

from sqlalchemy import select
from sqlalchemy.orm import Session
from xaclab_contracts.roles import ParamRoles

from xaclab_server.models import ChangePoint, Job, Machine, Result
from xaclab_server.schemas.history import ChangePointOut, HistoryOut, HistoryPoint
from xaclab_server.services.comparisons import matched_params
from xaclab_server.services.epochs import epochs_with_changes
from xaclab_server.services.result_views import flags_of, result_interval
from xaclab_server.services.series import change_points_for_series
from xaclab_server.services.series_keys import SeriesKey, canonical, series_params
from xaclab_server.services.series_views import change_numbers
from xaclab_server.services.systems import metric_words, params_words, title_of, unit_words

MAX_POINTS = 1000
# Results of the series' benchmark and metric looked at, newest first, to find its points.
SCANNED = 20_000


class SeriesUnknown(LookupError):
    """No machine of that id; the message is a sentence."""


def change_points(*, session: Session, result_ids: list[int]) -> list[ChangePointOut]:
    """Changes of the series' level, oldest first: the detector's change points of every
    series one of these results belongs to.  The detector keys a series by epoch and by
    the params that identify it, the history by machine and matched params, so the
    results, not the keys, tie the two together."""
    series_ids = {
        series_id
        for series_id in session.scalars(select(Result.series_id).where(Result.id.in_(result_ids)))
        if series_id is not None
    }
    found = [
        change
        for series_id in sorted(series_ids)
        for change in change_points_for_series(session=session, series_id=series_id)
    ]
    return [_change_point(change) for change in sorted(found, key=lambda c: (c.after_at, c.id))]


def _change_point(change: ChangePoint) -> ChangePointOut:
    numbers = change_numbers(change)
    revisions = (
        f"libxac {change.before_revision[:12]} → {change.after_revision[:12]}"
        if change.before_revision != change.after_revision
        else f"libxac {change.after_revision[:12]} on both sides"
    )
    return ChangePointOut(
        at=change.after_at,
        run_before=change.before_run_id,
        run_after=change.after_run_id,
        change_percent=numbers["percent"],
        low_percent=numbers["low_percent"],
        high_percent=numbers["high_percent"],
        description=f"{change.direction} ({revisions}; p = {change.p_value:.2g}"
        + ("; against the runs' other configurations" if change.view == "relative" else "")
        + "); "
        f"alert #{change.id}, {change.state}",
    )


def series_history(*, session: Session, key: SeriesKey, roles: ParamRoles) -> HistoryOut:
    machine = session.get(Machine, key.machine_id)
    if machine is None:
        raise SeriesUnknown(f"Machine {key.machine_id} does not exist.")
    found = session.execute(
        select(Result, Job.params)
        .join(Job, Job.id == Result.job_id)
        .where(
            Result.machine_id == key.machine_id,
            Result.suite == key.suite,
            Result.benchmark == key.benchmark,
            Result.metric == key.metric,
            Result.sut == key.sut,
            Result.unit == key.unit,
        )
        .order_by(Result.created_at.desc(), Result.id.desc())
        .limit(SCANNED)
    ).all()
    points: list[HistoryPoint] = []
    better = "lower"
    for result, job_params in found:
        params = series_params(result.suite, matched_params(result, job_params), roles)
        if canonical(params) != key.params:
            continue
        better = result.better
        points.append(_point(result))
    truncated = len(points) > MAX_POINTS
    points = points[:MAX_POINTS][::-1]
    words = params_words(key.params_dict)
    system = title_of(key.sut)
    return HistoryOut(
        machine_id=machine.id,
        machine=machine.name,
        suite=key.suite,
        benchmark=key.benchmark,
        sut=key.sut,
        system_title=system,
        metric=key.metric,
        unit=key.unit,
        better=better,
        params=key.params_dict,
        title=f"{system}: {key.benchmark} {metric_words(key.metric)} on {machine.name}"
        + (f" ({words})" if words else ""),
        y_title=f"{metric_words(key.metric)} ({unit_words(key.unit)}; {better} is better)",
        epochs=epochs_with_changes(session=session, machine_id=machine.id),
        points=points,
        change_points=change_points(session=session, result_ids=[p.result_id for p in points]),
        truncated=truncated,
    )


def _point(result: Result) -> HistoryPoint:
    low, high, kind = result_interval(result)
    return HistoryPoint(
        run_id=result.run_id,
        result_id=result.id,
        at=result.created_at,
        epoch=result.epoch,
        median=result.median,
        low=low,
        high=high,
        interval=kind,
        n=result.n,
        flags=flags_of(result),
        library_version=result.library_version,
        git_revision=result.git_revision,
    )
