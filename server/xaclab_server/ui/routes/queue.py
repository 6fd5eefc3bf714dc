"""The queue page: the newest runs (or one matrix's) and the jobs waiting or running."""

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select

from xaclab_server.api.deps import SessionDep
from xaclab_server.models import Job, Machine, Run
from xaclab_server.ui.guards import PageReader, page_router
from xaclab_server.ui.rendering import render

router = page_router()


@router.get("/queue", response_class=HTMLResponse)
def queue_page(
    request: Request, session: SessionDep, _reader: PageReader, matrix: int | None = None
) -> Response:
    query = select(Run).order_by(Run.id.desc()).limit(100)
    if matrix is not None:
        query = select(Run).where(Run.matrix_id == matrix).order_by(Run.id)
    runs = session.scalars(query).all()
    waiting = session.scalars(
        select(Job).where(Job.status.in_(("queued", "running"))).order_by(Job.id).limit(500)
    ).all()
    names = dict(session.execute(select(Machine.id, Machine.name)).tuples().all())
    return render(
        request,
        "queue.html",
        {"runs": runs, "jobs": waiting, "names": names, "matrix": matrix},
    )
