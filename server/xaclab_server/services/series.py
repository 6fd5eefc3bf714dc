"""Series: what a result is a point of, kept as results arrive (docs/change-points.md).

A series is one machine epoch × suite × benchmark × metric × system ×
workload parameters (:mod:`xaclab_server.models.series`).  Each upload puts
its results into their series (:func:`attach_series`, creating a series the
first time) and marks those series ``pending``, for the detector
(:mod:`.detection`).  :func:`series_points` reads a series back as points,
one per run, ordered by run time (or, with ``order="revision"``, by libxac
revision first).  The history page and the alerts read change points through
:func:`change_points_for_series`.

URLs name a series by its key: ``/series/{key}`` (the history page) and
``/api/v1/series/{key}``.
"""

import hashlib
import json
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session
from xaclab_contracts.roles import ParamRoles

from xaclab_server.models import BisectionRun, ChangePoint, Job, Result, Series
from xaclab_server.models.base import utcnow

# Job params that are not part of what a series measures: the revision is what
# a series is ordered by, and a time limit shapes nothing that is measured.
NOT_IDENTITY = frozenset({"libxac_revision", "timeout"})
KEY_LENGTH = 20


def identity_params(
    *, suite: str, result_params: dict[str, Any], job_params: dict[str, Any], roles: ParamRoles
) -> dict[str, Any]:
    """The params that identify a result's series: the job's and the result's, less the
    observed ones and :data:`NOT_IDENTITY`."""
    merged = {**job_params, **result_params}
    return {
        name: value
        for name, value in sorted(merged.items())
        if name not in NOT_IDENTITY and roles.role(suite, name) != "observed"
    }


def series_key(
    *,
    machine_id: int,
    epoch: int,
    suite: str,
    benchmark: str,
    metric: str,
    unit: str,
    better: str,
    sut: str,
    params: dict[str, Any],
) -> str:
    """The series' stable name: the first 20 hex digits of the SHA-256 of its identity."""
    identity = [machine_id, epoch, suite, benchmark, metric, unit, better, sut, params]
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_LENGTH]


def attach_series(
    *, session: Session, job: Job, results: Sequence[Result], roles: ParamRoles
) -> list[int]:
    """Give each (not yet flushed) result its series, creating series as needed, and mark
    them pending; return the series' ids.  Part of the caller's transaction."""
    now = utcnow()
    ids: dict[str, int] = {}
    for result in results:
        params = identity_params(
            suite=result.suite, result_params=result.params, job_params=job.params, roles=roles
        )
        fields: dict[str, Any] = {
            "machine_id": result.machine_id,
            "epoch": result.epoch,
            "suite": result.suite,
            "benchmark": result.benchmark,
            "metric": result.metric,
            "unit": result.unit,
            "better": result.better,
            "sut": result.sut,
            "params": params,
        }
        key = series_key(**fields)
        if key not in ids:
            ids[key] = _get_or_create(session, key, fields, now)
        result.series_id = ids[key]
    if ids:
        session.execute(
            update(Series)
            .where(Series.id.in_(ids.values()))
            .values(pending=True, last_point_at=now)
            .execution_options(synchronize_session=False)
        )
    return sorted(ids.values())


def attach_stored(*, session: Session, roles: ParamRoles, limit: int = 1000) -> int:
    """Put up to ``limit`` results stored before series existed into their series (marked
    pending, so the detector looks at them); commit; how many were placed."""
    rows = session.scalars(
        select(Result).where(Result.series_id.is_(None)).order_by(Result.id).limit(limit)
    ).all()
    by_job: dict[int, list[Result]] = {}
    for result in rows:
        by_job.setdefault(result.job_id, []).append(result)
    for job_id, results in by_job.items():
        attach_series(
            session=session, job=session.get_one(Job, job_id), results=results, roles=roles
        )
    session.commit()
    return len(rows)


def _get_or_create(session: Session, key: str, fields: dict[str, Any], now: datetime) -> int:
    """The series' id; created once even when two uploads race (ON CONFLICT DO NOTHING)."""
    found = session.scalar(select(Series.id).where(Series.key == key))
    if found is not None:
        return found
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    session.execute(
        insert(Series)
        .values(key=key, created_at=now, last_point_at=now, pending=True, **fields)
        .on_conflict_do_nothing(index_elements=["key"])
    )
    return session.scalars(select(Series.id).where(Series.key == key)).one()


@dataclass(frozen=True, slots=True)
class Point:
    """One run's point of a series: the median of its results' medians."""

    run_id: int
    at: datetime  # when the run's first result of the series was stored
    value: float
    revision: str  # the libxac revision the results ran (git_revision)
    result_ids: tuple[int, ...]
    flagged: bool  # some result of it carries a validity flag (or was never judged)
    bisection_id: int | None  # the bisection that queued the run, if one did


def series_points(
    *,
    session: Session,
    series_id: int,
    include_bisections: bool = False,
    order: Literal["time", "revision"] = "time",
    revision_rank: Callable[[str], int | None] | None = None,
    limit: int | None = None,
) -> list[Point]:
    """The series' points, oldest first (the newest ``limit`` of them when given).

    Runs queued by a bisection are left out unless ``include_bisections``.  With
    ``order="revision"`` the points are sorted by ``revision_rank`` (a revision's place
    in the libxac history; unknown revisions keep their time order after the known ones
    of the same time), then by time.
    """
    rows = session.execute(
        select(
            Result.id,
            Result.run_id,
            Result.created_at,
            Result.median,
            Result.git_revision,
            Result.flags,
            BisectionRun.bisection_id,
        )
        .outerjoin(BisectionRun, BisectionRun.run_id == Result.run_id)
        .where(Result.series_id == series_id)
        .order_by(Result.created_at, Result.id)
    ).all()
    grouped: dict[int, list[Any]] = {}
    for row in rows:
        if row.bisection_id is not None and not include_bisections:
            continue
        grouped.setdefault(row.run_id, []).append(row)
    points = [_point(run_id, members) for run_id, members in grouped.items()]
    points.sort(key=lambda p: (p.at, p.run_id))
    if order == "revision" and revision_rank is not None:
        ranks = {p.revision: revision_rank(p.revision) for p in points}
        points = _by_revision(points, ranks)
    return points[-limit:] if limit else points


def _point(run_id: int, members: list[Any]) -> Point:
    return Point(
        run_id=run_id,
        at=min(m.created_at for m in members),
        value=float(statistics.median(m.median for m in members)),
        revision=members[0].git_revision,
        result_ids=tuple(m.id for m in members),
        flagged=any(m.flags is None or bool(m.flags) for m in members),
        bisection_id=members[0].bisection_id,
    )


def _by_revision(points: list[Point], ranks: dict[str, int | None]) -> list[Point]:
    """Stable sort by revision rank; a point of unknown rank takes the rank of the point
    before it in time, so it stays where it ran."""
    keyed = []
    last = -1
    for index, point in enumerate(points):
        rank = ranks[point.revision]
        last = rank if rank is not None else last
        keyed.append((last, index, point))
    return [point for _rank, _index, point in sorted(keyed, key=lambda k: (k[0], k[1]))]


def find_series(*, session: Session, key: str) -> Series | None:
    return session.scalar(select(Series).where(Series.key == key))


def change_points_for_series(
    *, session: Session, series_id: int, include_withdrawn: bool = False
) -> list[ChangePoint]:
    """The series' change points, oldest first; those the detector no longer finds only
    with ``include_withdrawn``.  The history page marks each one (docs/change-points.md)."""
    query = select(ChangePoint).where(ChangePoint.series_id == series_id)
    if not include_withdrawn:
        query = query.where(ChangePoint.withdrawn_at.is_(None))
    return list(session.scalars(query.order_by(ChangePoint.after_at, ChangePoint.id)))


def describe(series: Series, machine_name: str) -> str:
    """A line naming the series for people: where, what, with which params."""
    params = ", ".join(f"{k}={v}" for k, v in series.params.items())
    where = f"{machine_name} (epoch {series.epoch})"
    return (
        f"{series.suite} {series.benchmark} {series.metric} [{series.unit}], {series.sut}"
        + (f", {params}" if params else "")
        + f" on {where}"
    )


def series_ids_of_results(results: Iterable[Result]) -> set[int]:
    return {r.series_id for r in results if r.series_id is not None}
