"""The run-matrix form: many runs at once, now or on a cron schedule."""

from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from xaclab_server.api.deps import LibxacGitDep, NotifierDep, SessionDep, SuitesDep
from xaclab_server.models import Machine
from xaclab_server.schemas.matrix import MatrixIn
from xaclab_server.schemas.schedule import ScheduleIn
from xaclab_server.services import matrices, scheduler
from xaclab_server.services.suites import AGENT_FACTORS, Suite, profile_rules
from xaclab_server.ui.forms import OperatorForm, submit
from xaclab_server.ui.guards import PageReader, page_router
from xaclab_server.ui.rendering import render, see_other

router = page_router()

MATRIX_FACTORS = ("write_cache", "durability", "procs", "advisory")


def matrix_form(
    request: Request,
    session: Session,
    suites: dict[str, Suite],
    *,
    chosen: dict[str, list[str]],
    error: str | None,
) -> Response:
    machines = session.scalars(select(Machine).order_by(Machine.name)).all()
    profiles = sorted({p for s in suites.values() for p in s.profiles})
    return render(
        request,
        "matrix_new.html",
        {
            "machines": machines,
            "suites": list(suites.values()),
            "profiles": profiles,
            "profile_rules": profile_rules(suites),
            "write_cache": AGENT_FACTORS["write_cache"].choices,
            "factors": MATRIX_FACTORS,
            "chosen": chosen,
            "error": error,
        },
        status=422 if error else 200,
    )


def _factor_value(text: str) -> Any:
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(lowered)
    except ValueError:
        pass
    try:
        return float(lowered)
    except ValueError:
        return text.strip()


def matrix_from_form(lists: dict[str, list[str]]) -> MatrixIn:
    """The matrix a form asks for; ValueError with a sentence if it is incomplete."""
    try:
        machine_ids = [int(v) for v in lists.get("machine_ids", [])]
    except ValueError:
        raise ValueError("Choose machines from the list.") from None
    factors: dict[str, list[Any]] = {}
    cache = lists.get("factor.write_cache", [])
    if cache:
        factors["write_cache"] = cache
    for name in MATRIX_FACTORS[1:]:
        text = (lists.get(f"factor.{name}") or [""])[0]
        values = [_factor_value(v) for v in text.split(",") if v.strip()]
        if values:
            factors[name] = values
    if not machine_ids or not lists.get("suites"):
        raise ValueError("Choose at least one machine and one suite.")
    return MatrixIn(
        machine_ids=machine_ids,
        suites=lists.get("suites", []),
        profiles=lists.get("profiles") or ["quick"],
        factors=factors,
    )


@router.get("/matrices/new", response_class=HTMLResponse)
def new_matrix_page(
    request: Request, session: SessionDep, suites: SuitesDep, _reader: PageReader
) -> Response:
    return matrix_form(request, session, suites, chosen={}, error=None)


@router.post("/matrices/new", response_class=HTMLResponse)
def submit_matrix(
    request: Request,
    session: SessionDep,
    suites: SuitesDep,
    notifier: NotifierDep,
    git: LibxacGitDep,
    form: OperatorForm,
) -> Response:
    def queue() -> Response:
        spec = matrix_from_form(form.lists)
        cron = form.get("cron").strip()
        if cron:
            body = ScheduleIn(name=form.get("name").strip() or cron, cron=cron, matrix=spec)
            scheduler.create_schedule(
                session=session, suites=suites, body=body, user=form.user, git=git
            )
            return see_other("/schedules")
        matrix, _runs = matrices.queue_matrix(
            session=session, suites=suites, spec=spec, user_id=form.user.id, git=git
        )
        notifier.notify()
        return see_other(f"/queue?matrix={matrix.id}")

    return submit(
        queue,
        refused=lambda why: matrix_form(request, session, suites, chosen=form.lists, error=why),
    )
