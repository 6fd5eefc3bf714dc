"""User API: runs and their results."""

from fastapi import APIRouter, HTTPException, status
from sqlalchemy import select
from sqlalchemy.orm import Session

from xaclab_server.api.deps import NotifierDep, SessionDep, SuitesDep
from xaclab_server.models import Machine, Result, Run
from xaclab_server.schemas.user import (
    JobOut,
    PageTouchChart,
    ResultOut,
    RunCreated,
    RunIn,
    RunOut,
)
from xaclab_server.services import jobs
from xaclab_server.services.charts import page_touch_chart
from xaclab_server.services.notifier import JobNotifier
from xaclab_server.services.suites import ParamError, Suite, check_run_request

router = APIRouter(prefix="/api/v1", tags=["user"])


@router.post("/runs", status_code=status.HTTP_201_CREATED)
def create_run(
    body: RunIn, session: SessionDep, suites: SuitesDep, notifier: NotifierDep
) -> RunCreated:
    run = queue_run(session=session, suites=suites, notifier=notifier, request=body)
    return RunCreated(run_id=run.id, job_ids=[job.id for job in run.jobs])


def queue_run(
    *, session: Session, suites: dict[str, Suite], notifier: JobNotifier, request: RunIn
) -> Run:
    """Validate a run request against its suite, queue it and wake claims; 422 on a bad one."""
    machine = session.get(Machine, request.machine_id)
    if machine is None:
        raise HTTPException(422, f"Machine {request.machine_id} does not exist.")
    try:
        check_run_request(
            suites=suites, suite=request.suite, profile=request.profile, params=request.params
        )
    except ParamError as exc:
        raise HTTPException(422, str(exc)) from exc
    run = jobs.create_run(
        session=session,
        machine=machine,
        suite=request.suite,
        profile=request.profile,
        params=request.params,
    )
    notifier.notify()
    return run


def _get_run(session: Session, run_id: int) -> Run:
    run = session.get(Run, run_id)
    if run is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"Run {run_id} does not exist.")
    return run


@router.get("/runs/{run_id}")
def read_run(session: SessionDep, run_id: int) -> RunOut:
    run = _get_run(session, run_id)
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


def _run_results(session: Session, run_id: int) -> list[Result]:
    return list(session.scalars(select(Result).where(Result.run_id == run_id).order_by(Result.id)))


@router.get("/runs/{run_id}/results")
def read_run_results(session: SessionDep, run_id: int) -> list[ResultOut]:
    _get_run(session, run_id)
    return [
        ResultOut(
            id=r.id,
            benchmark=r.benchmark,
            sut=r.sut,
            params=r.params,
            metric=r.metric,
            unit=r.unit,
            better=r.better,
            n=r.n,
            mean=r.mean,
            median=r.median,
            min=r.min,
            max=r.max,
            stddev=r.stddev,
            p99=r.p99,
        )
        for r in _run_results(session, run_id)
    ]


@router.get("/runs/{run_id}/chart")
def read_run_chart(session: SessionDep, run_id: int) -> PageTouchChart:
    """The run page's chart data: page_touch medians per n and the OS floor table."""
    run = _get_run(session, run_id)
    return page_touch_chart(run=run, results=_run_results(session, run_id))
