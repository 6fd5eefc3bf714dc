"""The series page: one series' history (its points over time, the bisection runs beside
them and its change points), where every alert's "history" link leads
(docs/change-points.md)."""

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select

from xaclab_server.api.deps import SessionDep, SettingsDep
from xaclab_server.models import Machine
from xaclab_server.services import series as series_service
from xaclab_server.services.series_views import (
    change_point_out,
    point_out,
    series_judgement,
    series_out,
)
from xaclab_server.ui.guards import PageReader, page_router
from xaclab_server.ui.rendering import not_found, render

router = page_router()

KEY_LENGTH = 64


@router.get("/series/{key}", response_class=HTMLResponse)
def series_page(
    request: Request, session: SessionDep, settings: SettingsDep, key: str, _reader: PageReader
) -> Response:
    found = series_service.find_series(session=session, key=key[:KEY_LENGTH])
    if found is None:
        return not_found(request, f"Series {key[:KEY_LENGTH]!r}")
    machine = session.scalar(select(Machine.name).where(Machine.id == found.machine_id))
    points = series_service.series_points(
        session=session, series_id=found.id, include_bisections=True
    )
    changes = series_service.change_points_for_series(
        session=session, series_id=found.id, include_withdrawn=True
    )
    chart = {
        "series": series_out(found, machine or "?"),
        "points": [point_out(p) for p in points],
        "change_points": [change_point_out(c) for c in changes],
        **series_judgement(
            session=session,
            series=found,
            changes=changes,
            settings=settings,
        ),
    }
    return render(request, "series.html", {"chart": chart})
