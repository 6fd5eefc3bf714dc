"""The run form, a run's page, and cancelling or re-running a run.

The run form is built from the suite declarations; its fields are named
``<suite>.profile`` and ``<suite>.param.<name>`` so that only the chosen
suite's fields count, with or without JavaScript.
"""

from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session
from xaclab_contracts.validity import FLAG_LABELS, WRITE_CACHE_LABELS

from xaclab_server.api.deps import LibxacGitDep, NotifierDep, ParamRolesDep, SessionDep, SuitesDep
from xaclab_server.models import Machine, Run
from xaclab_server.models.job import TERMINAL_STATES
from xaclab_server.schemas.run import RunIn
from xaclab_server.services import jobs, matrices
from xaclab_server.services.baselines import (
    BaselineRefused,
    baseline_of,
    comparison_links,
    set_baseline,
)
from xaclab_server.services.result_views import result_out
from xaclab_server.services.run_figures import run_figures, run_rows
from xaclab_server.services.run_queue import queue_run
from xaclab_server.services.series_keys import history_url, series_key
from xaclab_server.services.suites import Suite, coerce_form_value, ratios
from xaclab_server.services.systems import params_words, systems_of
from xaclab_server.ui.forms import Form, OperatorForm, submit
from xaclab_server.ui.guards import PageReader, page_router
from xaclab_server.ui.rendering import not_found, refused, render, see_other

router = page_router()


def run_form(
    request: Request,
    session: Session,
    suites: dict[str, Suite],
    *,
    chosen: dict[str, Any],
    error: str | None = None,
) -> Response:
    machines = session.scalars(select(Machine).order_by(Machine.name)).all()
    return render(
        request,
        "run_new.html",
        {"machines": machines, "suites": list(suites.values()), "chosen": chosen, "error": error},
        status=422 if error else 200,
    )


def _machine_id(form: Form) -> int | None:
    try:
        return int(form.get("machine_id"))
    except ValueError:
        return None


def run_request(form: Form, suites: dict[str, Suite]) -> RunIn:
    """The run a filled-in form asks for; ValueError with a sentence if it cannot be one."""
    machine_id = _machine_id(form)
    if machine_id is None:
        raise ValueError("Choose a machine.")
    suite = suites.get(form.get("suite"))
    if suite is None:
        raise ValueError(f"Unknown suite {form.get('suite')!r}.")
    params: dict[str, Any] = {}
    for name, decl in suite.params.items():
        raw = form.get(f"{suite.name}.param.{name}")
        # An unticked box is not given: a boolean false is never passed (docs/suites.md).
        if raw.strip():
            params[name] = coerce_form_value(decl, raw)
    revision = form.get("libxac_revision").strip()
    if revision:
        params["libxac_revision"] = revision
    return RunIn(
        machine_id=machine_id,
        suite=suite.name,
        profile=form.get(f"{suite.name}.profile"),
        params=params,
    )


@router.get("/runs/new", response_class=HTMLResponse)
def new_run_page(
    request: Request,
    session: SessionDep,
    suites: SuitesDep,
    _reader: PageReader,
    machine_id: int | None = None,
) -> Response:
    return run_form(request, session, suites, chosen={"machine_id": machine_id})


@router.post("/runs/new", response_class=HTMLResponse)
def submit_run(
    request: Request,
    session: SessionDep,
    suites: SuitesDep,
    notifier: NotifierDep,
    git: LibxacGitDep,
    form: OperatorForm,
) -> Response:
    chosen = {"suite": form.get("suite"), "fields": form.fields, "machine_id": _machine_id(form)}

    def queue() -> Response:
        body = run_request(form, suites)
        run = queue_run(
            session=session,
            suites=suites,
            notifier=notifier,
            request=body,
            user_id=form.user.id,
            git=git,
        )
        return see_other(f"/runs/{run.id}")

    return submit(
        queue, refused=lambda why: run_form(request, session, suites, chosen=chosen, error=why)
    )


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(
    request: Request,
    session: SessionDep,
    suites: SuitesDep,
    roles: ParamRolesDep,
    _reader: PageReader,
    run_id: int,
) -> Response:
    run = session.get(Run, run_id)
    if run is None:
        return not_found(request, f"Run {run_id}")
    machine = session.get_one(Machine, run.machine_id)
    found = run_rows(session=session, run=run)
    rows = [result_out(r) for r, _params in found]
    figures = run_figures(run=run, rows=found, suites=suites, roles=roles)
    baseline = baseline_of(session=session, machine_id=run.machine_id, suite=run.suite)
    return render(
        request,
        "run.html",
        {
            "run": run,
            "suite": suites.get(run.suite),
            "machine": machine,
            "results": rows,
            "histories": {r.id: history_url(series_key(r, params, roles)) for r, params in found},
            "flagged": sum(bool(r.flags) or r.flags is None for r in rows),
            "flag_labels": FLAG_LABELS,
            "write_cache_labels": WRITE_CACHE_LABELS,
            "figures": figures,
            "links": comparison_links(
                session=session,
                run=run,
                systems=systems_of(suites),
                system_ratios=ratios(suites, run.suite),
            ),
            "baseline": baseline,
            "params_words": params_words,
            "terminal": run.status in TERMINAL_STATES,
        },
    )


@router.post("/runs/{run_id}/{action}", response_class=HTMLResponse)
def run_action(
    request: Request,
    run_id: int,
    action: str,
    session: SessionDep,
    notifier: NotifierDep,
    form: OperatorForm,
) -> Response:
    run = session.get(Run, run_id)
    if run is None or action not in ("cancel", "rerun", "baseline"):
        return not_found(request, f"Run {run_id}")
    if action == "cancel":
        for job in list(run.jobs):
            if job.status not in TERMINAL_STATES:
                jobs.cancel_job(session=session, job=job)
        return see_other(f"/runs/{run.id}")
    if action == "baseline":
        try:
            set_baseline(session=session, run=run, user_id=form.user.id)
        except BaselineRefused as exc:
            return refused(request, str(exc), 422)
        return see_other(f"/runs/{run.id}")
    copy = matrices.rerun(session=session, run=run, user_id=form.user.id)
    notifier.notify()
    return see_other(f"/runs/{copy.id}")
