"""User API: series (docs/change-points.md): which there are, and one's points and change
points, for the history page and for scripts."""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Path, Query, status
from sqlalchemy import select

from xaclab_server.api.deps import LibxacGitDep, SessionDep, SettingsDep
from xaclab_server.models import Machine, Series
from xaclab_server.services import series as series_service
from xaclab_server.services.series_views import (
    change_point_out,
    point_out,
    series_judgement,
    series_out,
)

router = APIRouter(prefix="/api/v1", tags=["series"])


@router.get("/series")
def list_series(
    session: SessionDep,
    machine_id: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
    suite: Annotated[str | None, Query(max_length=100)] = None,
    benchmark: Annotated[str | None, Query(max_length=100)] = None,
    limit: Annotated[int, Query(ge=1, le=5000)] = 500,
) -> list[dict[str, Any]]:
    """Series, the most recently measured first."""
    query = select(Series, Machine.name).join(Machine, Machine.id == Series.machine_id)
    if machine_id is not None:
        query = query.where(Series.machine_id == machine_id)
    if suite:
        query = query.where(Series.suite == suite)
    if benchmark:
        query = query.where(Series.benchmark == benchmark)
    rows = session.execute(query.order_by(Series.last_point_at.desc(), Series.id).limit(limit))
    return [series_out(s, name) for s, name in rows]


@router.get("/series/{key}")
def read_series(
    session: SessionDep,
    git: LibxacGitDep,
    settings: SettingsDep,
    key: Annotated[str, Path(max_length=64)],
    order: Literal["time", "revision"] = "time",
    bisections: bool = True,
) -> dict[str, Any]:
    """The series, its points (one per run: the median of the run's results' medians), its
    change points, what it can show (``sensitivity``: its run-to-run noise and the
    smallest step the detector finds in most cases), and ``view``: the points the detector
    reads against the same runs' other configurations (null where the series has none).
    ``order=revision`` sorts the points by libxac revision (the server's git history) before
    time; ``bisections=false`` leaves out bisection runs."""
    found = series_service.find_series(session=session, key=key)
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"Series {key!r} does not exist.")
    ranks = _short_ranks(git.ranks()) if git is not None and order == "revision" else {}
    points = series_service.series_points(
        session=session,
        series_id=found.id,
        include_bisections=bisections,
        order=order,
        revision_rank=lambda r: _rank(ranks, r),
    )
    machine = session.get_one(Machine, found.machine_id)
    changes = series_service.change_points_for_series(
        session=session, series_id=found.id, include_withdrawn=True
    )
    return {
        **series_out(found, machine.name),
        "points": [point_out(p) for p in points],
        "change_points": [change_point_out(c) for c in changes],
        **series_judgement(
            session=session,
            series=found,
            changes=changes,
            settings=settings,
        ),
    }


SHORT = 12  # results name their revision by 12 hex digits (libxac/Makefile's GITREV)


def _short_ranks(ranks: dict[str, int]) -> dict[str, int]:
    return {full[:SHORT]: rank for full, rank in ranks.items()}


def _rank(ranks: dict[str, int], revision: str) -> int | None:
    return ranks.get(revision[:SHORT]) if len(revision) >= SHORT else None
