"""The thesis-reproduction page: pick a machine, see the thesis's tables beside its results.

Readable by anyone who may read pages (any logged-in user, or everyone while
``XACLAB_ANONYMOUS_READ`` is true), like the other pages.  Its export links
point at ``GET /api/v1/machines/{id}/reproduction``.
"""

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select

from xaclab_server.api.deps import SessionDep, ThesisFiguresDep
from xaclab_server.models import Machine
from xaclab_server.models.base import utcnow
from xaclab_server.services.reproduction import machine_report
from xaclab_server.services.reproduction_export import HELPERS
from xaclab_server.ui.guards import PageReader, page_router
from xaclab_server.ui.rendering import not_found, render

router = page_router()


@router.get("/reproduction", response_class=HTMLResponse)
def reproduction_page(
    request: Request,
    session: SessionDep,
    figures: ThesisFiguresDep,
    _reader: PageReader,
    machine_id: str | None = None,
) -> Response:
    report = None
    if machine_id:
        try:
            chosen = int(machine_id)
        except ValueError:
            chosen = 0
        report = machine_report(session=session, figures=figures, machine_id=chosen, now=utcnow())
        if report is None:
            return not_found(request, f"Machine {machine_id!r}")
    machines = session.scalars(select(Machine).order_by(Machine.name)).all()
    return render(request, "reproduction.html", {"machines": machines, "report": report, **HELPERS})
