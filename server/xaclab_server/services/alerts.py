"""Alerts: the change points people see, filter, acknowledge and dismiss.

Every change point is an alert (docs/change-points.md).  Its ``state`` is
``open`` until someone acknowledges it (they look into it) or dismisses it
as expected (with a note saying why); either can be undone by setting it
open again.  A change point the detector withdrew stays listed, marked
withdrawn, unless the caller asks for current ones only.

:func:`alert_view` is what the page, the API and the webhook say about one:
the series, the size with its interval, the runs and libxac revisions on
either side, and the links to the series' history (``/series/{key}``) and
to the comparison of the two runs on either side.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from xaclab_server.models import Bisection, ChangePoint, Machine, Series
from xaclab_server.models.change_point import ALERT_STATES
from xaclab_server.services.series_views import change_numbers, series_out

MAX_NOTE = 500
# What the people's actions on an alert make its state.
ACTIONS = {"acknowledge": "acknowledged", "dismiss": "dismissed", "reopen": "open"}


class AlertRefused(ValueError):
    """A state change that is not allowed; the message is a sentence (HTTP 422)."""


@dataclass(frozen=True, slots=True)
class AlertFilter:
    state: str | None = None
    direction: str | None = None
    machine_id: int | None = None
    suite: str | None = None
    include_withdrawn: bool = True


def list_alerts(
    *, session: Session, where: AlertFilter, before: int | None = None, limit: int = 50
) -> list[tuple[ChangePoint, Series, str]]:
    """Alerts newest first (by id), with their series and machine name."""
    query: Select[tuple[ChangePoint, Series, str]] = (
        select(ChangePoint, Series, Machine.name)
        .join(Series, Series.id == ChangePoint.series_id)
        .join(Machine, Machine.id == Series.machine_id)
    )
    if where.state:
        query = query.where(ChangePoint.state == where.state)
    if where.direction:
        query = query.where(ChangePoint.direction == where.direction)
    if where.machine_id is not None:
        query = query.where(Series.machine_id == where.machine_id)
    if where.suite:
        query = query.where(Series.suite == where.suite)
    if not where.include_withdrawn:
        query = query.where(ChangePoint.withdrawn_at.is_(None))
    if before is not None:
        query = query.where(ChangePoint.id < before)
    rows = session.execute(query.order_by(ChangePoint.id.desc()).limit(limit)).all()
    return [(row[0], row[1], row[2]) for row in rows]


def get_alert(*, session: Session, alert_id: int) -> tuple[ChangePoint, Series, str] | None:
    row = session.execute(
        select(ChangePoint, Series, Machine.name)
        .join(Series, Series.id == ChangePoint.series_id)
        .join(Machine, Machine.id == Series.machine_id)
        .where(ChangePoint.id == alert_id)
    ).first()
    return None if row is None else (row[0], row[1], row[2])


def set_state(
    *, session: Session, change: ChangePoint, state: str, note: str, user_id: int, now: datetime
) -> None:
    """Acknowledge, dismiss (a note is required) or reopen an alert; commits."""
    if state not in ALERT_STATES:
        raise AlertRefused(f"An alert's state is one of {', '.join(ALERT_STATES)}, not {state!r}.")
    note = note.strip()
    if len(note) > MAX_NOTE:
        raise AlertRefused(f"The note is longer than {MAX_NOTE} characters.")
    if state == "dismissed" and not note:
        raise AlertRefused("Say why the change is expected: dismissing an alert needs a note.")
    change.state, change.state_by_id, change.state_at = state, user_id, now
    if note or state == "open":
        change.note = note
    session.commit()


def links(change: ChangePoint, series: Series) -> dict[str, str]:
    return {
        "alert": f"/alerts/{change.id}",
        "history": f"/series/{series.key}",
        "compare": f"/compare?kind=runs&a={change.before_run_id}&b={change.after_run_id}",
        "before_run": f"/runs/{change.before_run_id}",
        "after_run": f"/runs/{change.after_run_id}",
    }


def alert_view(
    change: ChangePoint,
    series: Series,
    machine_name: str,
    bisection: Bisection | None = None,
    base_url: str = "",
) -> dict[str, Any]:
    """The alert as JSON: for the API, the page and the webhook."""
    return {
        "id": change.id,
        "state": change.state,
        "note": change.note,
        "withdrawn": change.withdrawn_at is not None,
        "withdrawn_at": _time(change.withdrawn_at),
        "direction": change.direction,
        "detected_at": _time(change.detected_at),
        "series": series_out(series, machine_name),
        "change": change_numbers(change),
        "before": {
            "run_id": change.before_run_id,
            "revision": change.before_revision,
            "at": _time(change.before_at),
        },
        "after": {
            "run_id": change.after_run_id,
            "revision": change.after_revision,
            "at": _time(change.after_at),
        },
        "links": {name: base_url + path for name, path in links(change, series).items()},
        "bisection": None if bisection is None else bisection_view(bisection),
    }


def bisection_view(bisection: Bisection) -> dict[str, Any]:
    return {
        "id": bisection.id,
        "state": bisection.state,
        "good_revision": bisection.good_revision,
        "bad_revision": bisection.bad_revision,
        "candidates": len(bisection.candidates),
        "culprit": bisection.culprit,
        "confidence": bisection.confidence,
        "message": bisection.message,
        "steps": bisection.steps,
        "automatic": bisection.started_by_id is None,
        "created_at": _time(bisection.created_at),
        "finished_at": _time(bisection.finished_at),
    }


def latest_bisections(*, session: Session, change_ids: list[int]) -> dict[int, Bisection]:
    """Each change point's newest bisection."""
    if not change_ids:
        return {}
    found: dict[int, Bisection] = {}
    for bisection in session.scalars(
        select(Bisection).where(Bisection.change_point_id.in_(change_ids)).order_by(Bisection.id)
    ):
        found[bisection.change_point_id] = bisection
    return found


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()
