"""The machines page (also the home page) and an admin's actions on a machine."""

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select

from xaclab_server.api.deps import ClockDep, SessionDep, SettingsDep, actor_of
from xaclab_server.models import Machine, Run
from xaclab_server.models.base import utcnow
from xaclab_server.services import machine_admin
from xaclab_server.services.machines import is_online
from xaclab_server.ui.forms import AdminForm
from xaclab_server.ui.guards import PageReader, page_router
from xaclab_server.ui.rendering import not_found, render, see_other

router = page_router()

RECENT_RUNS = 20


@router.get("/", response_class=HTMLResponse)
@router.get("/machines", response_class=HTMLResponse)
def machines_page(
    request: Request, session: SessionDep, settings: SettingsDep, _reader: PageReader
) -> Response:
    now = utcnow()
    machines = [
        (m, is_online(m, now=now, window_seconds=settings.machine_online_seconds))
        for m in session.scalars(select(Machine).order_by(Machine.name))
    ]
    runs = session.scalars(select(Run).order_by(Run.id.desc()).limit(RECENT_RUNS)).all()
    names = {m.id: m.name for m, _online in machines}
    return render(request, "machines.html", {"machines": machines, "runs": runs, "names": names})


@router.post("/machines/{machine_id}/{action}", response_class=HTMLResponse)
def machine_action(
    request: Request,
    machine_id: int,
    action: str,
    session: SessionDep,
    clock: ClockDep,
    form: AdminForm,
) -> Response:
    machine = session.get(Machine, machine_id)
    if machine is None or action not in ("approve", "rotate-token"):
        return not_found(request, f"Machine {machine_id}")
    actor = actor_of(form.user, request)
    if action == "approve":
        machine_admin.approve(session=session, machine=machine, actor=actor, now=clock())
        return see_other("/machines")
    token = machine_admin.rotate_token(session=session, machine=machine, actor=actor, now=clock())
    return render(
        request,
        "secret.html",
        {
            "title": f"New agent token for {machine.name}",
            "secret": token,
            "help": "Put it in the agent's configuration; the old token no longer works. "
            "It is shown only this once.",
        },
    )
