"""The schedules page, and turning a schedule on or off or deleting it."""

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select

from xaclab_server.api.deps import SessionDep
from xaclab_server.models import Schedule
from xaclab_server.services import scheduler
from xaclab_server.ui.forms import OperatorForm
from xaclab_server.ui.guards import PageReader, page_router
from xaclab_server.ui.rendering import not_found, render, see_other

router = page_router()


@router.get("/schedules", response_class=HTMLResponse)
def schedules_page(request: Request, session: SessionDep, _reader: PageReader) -> Response:
    schedules = session.scalars(select(Schedule).order_by(Schedule.id)).all()
    return render(request, "schedules.html", {"schedules": schedules})


@router.post("/schedules/{schedule_id}/{action}", response_class=HTMLResponse)
def schedule_action(
    request: Request, schedule_id: int, action: str, session: SessionDep, _form: OperatorForm
) -> Response:
    schedule = session.get(Schedule, schedule_id)
    if schedule is None or action not in ("enable", "disable", "delete"):
        return not_found(request, f"Schedule {schedule_id}")
    if action == "delete":
        session.delete(schedule)
        session.commit()
    else:
        scheduler.update_schedule(
            session=session, schedule=schedule, enabled=action == "enable", cron=None
        )
    return see_other("/schedules")
