"""The thesis-reproduction page: pick a machine, see the thesis's tables beside its results.

Readable by anyone who may read pages (any logged-in user, or everyone while
``XACLAB_ANONYMOUS_READ`` is true), like the other pages.  Its export links
point at ``GET /api/v1/machines/{id}/reproduction``.
"""

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select

from xaclab_server.api.deps import NotifierDep, SessionDep, SuitesDep, ThesisFiguresDep
from xaclab_server.models import Machine
from xaclab_server.models.base import utcnow
from xaclab_server.services.reproduction import MAX_ID, machine_report
from xaclab_server.services.reproduction_export import HELPERS
from xaclab_server.services.reproduction_plan import estimate_plan, queue_plan
from xaclab_server.ui.forms import OperatorForm, submit
from xaclab_server.ui.guards import PageReader, page_router
from xaclab_server.ui.rendering import not_found, render, see_other

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
    plan = None
    if report is not None:
        plan = estimate_plan(session=session, machine=session.get_one(Machine, report.machine.id))
    return render(
        request,
        "reproduction.html",
        {
            "machines": machines,
            "report": report,
            "plan": plan,
            "queued": request.query_params.get("queued", "")[:10],
            **HELPERS,
        },
    )


@router.post("/reproduction/queue", response_class=HTMLResponse)
def queue_reproduction(
    request: Request,
    session: SessionDep,
    suites: SuitesDep,
    notifier: NotifierDep,
    figures: ThesisFiguresDep,
    form: OperatorForm,
) -> Response:
    """Queue every matrix the report's tables need on the chosen machine (one action)."""
    raw = form.get("machine_id")
    machine = session.get(Machine, int(raw)) if raw.isdigit() and int(raw) <= MAX_ID else None
    if machine is None:
        return not_found(request, f"Machine {raw[:20]!r}")

    def queue() -> Response:
        queued = queue_plan(
            session=session, suites=suites, machine_id=machine.id, user_id=form.user.id
        )
        notifier.notify()
        jobs = sum(len(run.jobs) for _matrix, runs in queued for run in runs)
        return see_other(f"/reproduction?machine_id={machine.id}&queued={jobs}")

    def refused(why: str) -> Response:
        report = machine_report(
            session=session, figures=figures, machine_id=machine.id, now=utcnow()
        )
        return render(
            request,
            "reproduction.html",
            {
                "machines": [machine],
                "report": report,
                "plan": estimate_plan(session=session, machine=machine),
                "error": why,
                **HELPERS,
            },
            status=422,
        )

    return submit(queue, refused=refused)
