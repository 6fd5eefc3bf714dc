"""Web pages: machines, the run form, run pages. Every asset comes from /static.

The run form is built from the suite declarations; its fields are named
``<suite>.profile`` and ``<suite>.param.<name>`` so that only the chosen
suite's fields count, with or without JavaScript.
"""

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from xaclab_server.api.deps import (
    NotifierDep,
    SessionDep,
    SessionFactoryDep,
    SettingsDep,
    SuitesDep,
)
from xaclab_server.api.routes.runs import queue_run
from xaclab_server.core.paths import PACKAGE_DIR
from xaclab_server.models import Machine, Run
from xaclab_server.models.base import utcnow
from xaclab_server.schemas.user import RunIn
from xaclab_server.services.machines import is_online
from xaclab_server.services.notifier import JobNotifier
from xaclab_server.services.suites import ParamError, Suite, coerce_form_value

router = APIRouter(include_in_schema=False)
templates = Jinja2Templates(directory=PACKAGE_DIR / "templates")

# Everything from this server; uPlot sets inline styles on its elements.
CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
RECENT_RUNS = 20


def _page(request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
    response = templates.TemplateResponse(request, name, context, status_code=status)
    response.headers["Content-Security-Policy"] = CSP
    return response


@router.get("/", response_class=HTMLResponse)
@router.get("/machines", response_class=HTMLResponse)
def machines_page(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    now = utcnow()
    machines = [
        (m, is_online(m, now=now, window_seconds=settings.machine_online_seconds))
        for m in session.scalars(select(Machine).order_by(Machine.name))
    ]
    runs = session.scalars(select(Run).order_by(Run.id.desc()).limit(RECENT_RUNS)).all()
    names = {m.id: m.name for m, _online in machines}
    return _page(request, "machines.html", {"machines": machines, "runs": runs, "names": names})


@router.get("/runs/new", response_class=HTMLResponse)
def new_run_page(
    request: Request, session: SessionDep, suites: SuitesDep, machine_id: int | None = None
) -> Response:
    return _form_page(request, session, suites, chosen={"machine_id": machine_id})


def _form_page(
    request: Request,
    session: Session,
    suites: dict[str, Suite],
    *,
    chosen: dict[str, Any],
    error: str | None = None,
) -> Response:
    machines = session.scalars(select(Machine).order_by(Machine.name)).all()
    return _page(
        request,
        "run_new.html",
        {"machines": machines, "suites": list(suites.values()), "chosen": chosen, "error": error},
        status=422 if error else 200,
    )


@router.post("/runs/new", response_class=HTMLResponse)
async def submit_run(
    request: Request,
    factory: SessionFactoryDep,
    suites: SuitesDep,
    notifier: NotifierDep,
) -> Response:
    form = await request.form()
    fields = {key: value for key, value in form.items() if isinstance(value, str)}
    return await run_in_threadpool(_submit_run, request, factory, suites, notifier, fields)


def _submit_run(
    request: Request,
    factory: sessionmaker[Session],
    suites: dict[str, Suite],
    notifier: JobNotifier,
    fields: dict[str, str],
) -> Response:
    suite_name = fields.get("suite", "")
    chosen: dict[str, Any] = {"suite": suite_name, "fields": fields}
    with factory() as session:
        try:
            machine_id = int(fields.get("machine_id", ""))
        except ValueError:
            return _form_page(request, session, suites, chosen=chosen, error="Choose a machine.")
        chosen["machine_id"] = machine_id
        suite = suites.get(suite_name)
        if suite is None:
            return _form_page(
                request, session, suites, chosen=chosen, error=f"Unknown suite {suite_name!r}."
            )
        params: dict[str, Any] = {}
        try:
            for name, decl in suite.params.items():
                raw = fields.get(f"{suite.name}.param.{name}", "")
                # An unticked box is not given: a boolean false is never passed (docs/suites.md).
                if raw.strip():
                    params[name] = coerce_form_value(decl, raw)
        except ParamError as exc:
            return _form_page(request, session, suites, chosen=chosen, error=str(exc))
        body = RunIn(
            machine_id=machine_id,
            suite=suite.name,
            profile=fields.get(f"{suite.name}.profile", ""),
            params=params,
        )
        try:
            run = queue_run(session=session, suites=suites, notifier=notifier, request=body)
        except HTTPException as exc:
            return _form_page(request, session, suites, chosen=chosen, error=str(exc.detail))
        return RedirectResponse(f"/runs/{run.id}", status_code=303)


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(request: Request, session: SessionDep, run_id: int) -> Response:
    run = session.get(Run, run_id)
    if run is None:
        return _page(request, "not_found.html", {"what": f"Run {run_id}"}, status=404)
    machine = session.get_one(Machine, run.machine_id)
    return _page(request, "run.html", {"run": run, "machine": machine})
