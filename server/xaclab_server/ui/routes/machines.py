"""The machines page (also the home page) and an admin's actions on a machine."""

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select

from xaclab_server.api.deps import (
    ClockDep,
    ParamRolesDep,
    SessionDep,
    SettingsDep,
    SuitesDep,
    actor_of,
)
from xaclab_server.models import Machine, Run
from xaclab_server.models.base import utcnow
from xaclab_server.services import machine_admin
from xaclab_server.services.machines import is_online
from xaclab_server.services.overview import machine_overview
from xaclab_server.services.systems import systems_of
from xaclab_server.ui.forms import AdminForm
from xaclab_server.ui.guards import PageReader, page_router
from xaclab_server.ui.rendering import not_found, render, see_other

router = page_router()

RECENT_RUNS = 20
MAX_ID = 2**31  # ids are PostgreSQL integers


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


@router.get("/machines/{machine_id}", response_class=HTMLResponse)
def overview_page(
    request: Request,
    session: SessionDep,
    suites: SuitesDep,
    roles: ParamRolesDep,
    _reader: PageReader,
    machine_id: int,
    epoch: int | None = None,
) -> Response:
    """The machine's overview in one epoch (its current one unless ``epoch`` names another)."""
    machine = session.get(Machine, machine_id) if 0 < machine_id < MAX_ID else None
    if machine is None:
        return not_found(request, f"Machine {machine_id}")
    chosen = machine.epoch if epoch is None else epoch
    if not 0 < chosen <= machine.epoch:
        return not_found(request, f"Epoch {chosen} of {machine.name}")
    overview = machine_overview(
        session=session,
        machine=machine,
        epoch=chosen,
        suites=suites,
        systems=systems_of(suites),
        roles=roles,
    )
    return render(request, "overview.html", {"overview": overview})


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
