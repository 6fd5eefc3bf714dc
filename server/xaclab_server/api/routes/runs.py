"""User API: runs, their results, charts and live events; the queue; re-run and cancel."""

import asyncio
import csv
import io
import json
from collections.abc import AsyncIterator
from typing import Literal

from fastapi import APIRouter, HTTPException, Request, status
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response, StreamingResponse
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from xaclab_server.api.deps import (
    LibxacGitDep,
    NotifierDep,
    OperatorUser,
    ParamRolesDep,
    SessionDep,
    SessionFactoryDep,
    SettingsDep,
    SuitesDep,
)
from xaclab_server.models import Job, Result, Run
from xaclab_server.models.job import TERMINAL_STATES
from xaclab_server.schemas.figure import RunFigures
from xaclab_server.schemas.job import JobDetail, JobOut
from xaclab_server.schemas.result import ResultOut
from xaclab_server.schemas.run import RunCreated, RunEvent, RunIn, RunOut
from xaclab_server.services import jobs, matrices, run_events
from xaclab_server.services.result_views import CSV_FIELDS, result_out
from xaclab_server.services.run_figures import figures_of_run
from xaclab_server.services.run_queue import RunRefused, queue_run

router = APIRouter(prefix="/api/v1", tags=["user"])

KEEPALIVE_SECONDS = 15.0
QUEUE_LIMIT = 500


@router.post("/runs", status_code=status.HTTP_201_CREATED)
def create_run(
    body: RunIn,
    session: SessionDep,
    suites: SuitesDep,
    notifier: NotifierDep,
    git: LibxacGitDep,
    user: OperatorUser,
) -> RunCreated:
    try:
        run = queue_run(
            session=session,
            suites=suites,
            notifier=notifier,
            request=body,
            user_id=user.id,
            git=git,
        )
    except RunRefused as exc:
        raise HTTPException(422, str(exc)) from exc
    return RunCreated(run_id=run.id, job_ids=[job.id for job in run.jobs])


def _get_run(session: Session, run_id: int) -> Run:
    run = session.get(Run, run_id)
    if run is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"Run {run_id} does not exist.")
    return run


def run_out(run: Run) -> RunOut:
    return RunOut(
        id=run.id,
        status=run.status,
        suite=run.suite,
        profile=run.profile,
        params=run.params,
        machine_id=run.machine_id,
        created_at=run.created_at,
        finished_at=run.finished_at,
        jobs=[
            JobOut(id=j.id, status=j.status, progress=j.progress, message=j.message)
            for j in run.jobs
        ],
    )


@router.get("/runs/{run_id}")
def read_run(session: SessionDep, run_id: int) -> RunOut:
    return run_out(_get_run(session, run_id))


def _run_results(session: Session, run_id: int) -> list[Result]:
    return list(session.scalars(select(Result).where(Result.run_id == run_id).order_by(Result.id)))


@router.get(
    "/runs/{run_id}/results",
    response_model=list[ResultOut],
    responses={200: {"content": {"text/csv": {}}, "description": "JSON, or CSV with format=csv"}},
)
def read_run_results(
    session: SessionDep, run_id: int, format: Literal["json", "csv"] = "json"
) -> Response:
    """Every result's summary with its validity flags (null: not judged), epoch and the 95%
    interval of its median (docs/validity.md); ``format=csv`` for a spreadsheet."""
    _get_run(session, run_id)
    rows = [result_out(r) for r in _run_results(session, run_id)]
    if format == "json":
        body = json.dumps([r.model_dump() for r in rows])
        return Response(body, media_type="application/json")
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_FIELDS)
    for row in rows:
        cells = row.model_dump()
        cells["params"] = json.dumps(cells["params"], sort_keys=True)
        cells["flags"] = "not judged" if cells["flags"] is None else json.dumps(cells["flags"])
        writer.writerow(["" if cells[f] is None else cells[f] for f in CSV_FIELDS])
    return Response(
        buffer.getvalue(),
        media_type="text/csv",
        headers={"Content-Disposition": f'attachment; filename="xaclab-run-{run_id}.csv"'},
    )


@router.get("/runs/{run_id}/charts")
def read_run_charts(
    session: SessionDep, suites: SuitesDep, roles: ParamRolesDep, run_id: int
) -> RunFigures:
    """The run page's figures, per benchmark: lines against a numeric parameter, dot plots
    of each system and variant, percentiles and the k-th most expensive of distributions,
    and the single values (docs/server.md, "Run pages")."""
    run = _get_run(session, run_id)
    return figures_of_run(session=session, run=run, suites=suites, roles=roles)


@router.post("/runs/{run_id}/cancel")
def cancel_run(session: SessionDep, run_id: int, _user: OperatorUser) -> RunOut:
    """Cancel every unfinished job: queued ones at once, running ones at their next heartbeat."""
    run = _get_run(session, run_id)
    for job in list(run.jobs):
        if job.status not in TERMINAL_STATES:
            jobs.cancel_job(session=session, job=job)
    session.refresh(run)
    return run_out(run)


@router.post("/runs/{run_id}/rerun", status_code=status.HTTP_201_CREATED)
def rerun(
    session: SessionDep, run_id: int, notifier: NotifierDep, user: OperatorUser
) -> RunCreated:
    """Queue the same machine, suite, profile and jobs' params again, as a new run."""
    copy = matrices.rerun(session=session, run=_get_run(session, run_id), user_id=user.id)
    notifier.notify()
    return RunCreated(run_id=copy.id, job_ids=[job.id for job in copy.jobs])


@router.get("/queue")
def read_queue(session: SessionDep) -> list[JobDetail]:
    """Queued and running jobs, oldest first."""
    queued = session.scalars(
        select(Job).where(Job.status.in_(("queued", "running"))).order_by(Job.id).limit(QUEUE_LIMIT)
    )
    return [run_events.job_detail(session, j, with_log=False) for j in queued]


def _snapshot(factory: sessionmaker[Session], run_id: int) -> RunEvent | None:
    with factory() as session:
        run = session.get(Run, run_id)
        return None if run is None else run_events.snapshot(session=session, run=run)


@router.get(
    "/runs/{run_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "Server-sent events."}},
)
async def run_event_stream(
    request: Request, run_id: int, factory: SessionFactoryDep, settings: SettingsDep
) -> StreamingResponse:
    """Server-sent events: ``run`` with a :class:`RunEvent` whenever it changes, ``end`` at the end.

    The stream closes once the run has finished; a client that reconnects
    gets the current snapshot first.  No database connection is held between
    looks.
    """
    first = await run_in_threadpool(_snapshot, factory, run_id)
    if first is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"Run {run_id} does not exist.")

    async def events() -> AsyncIterator[str]:
        current: RunEvent | None = first
        sent = ""
        quiet = 0.0
        while current is not None:
            data = current.model_dump_json()
            if data != sent:
                sent = data
                quiet = 0.0
                yield f"event: run\ndata: {data}\n\n"
            if current.status in TERMINAL_STATES:
                yield f"event: end\ndata: {json.dumps({'status': current.status})}\n\n"
                return
            await asyncio.sleep(settings.events_poll_seconds)
            quiet += settings.events_poll_seconds
            if quiet >= KEEPALIVE_SECONDS:
                quiet = 0.0
                yield ": keep-alive\n\n"
            if await request.is_disconnected():
                return
            current = await run_in_threadpool(_snapshot, factory, run_id)

    return StreamingResponse(
        events(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
