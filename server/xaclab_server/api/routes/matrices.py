"""User API: run matrices and recurring schedules of them (docs/server.md)."""

from fastapi import APIRouter, HTTPException, status
from sqlalchemy import select

from xaclab_server.api.deps import LibxacGitDep, NotifierDep, OperatorUser, SessionDep, SuitesDep
from xaclab_server.models import Matrix, Run, Schedule
from xaclab_server.schemas.matrix import MatrixCreated, MatrixIn, MatrixRun
from xaclab_server.schemas.schedule import ScheduleIn, ScheduleOut, SchedulePatch
from xaclab_server.services import matrices, scheduler
from xaclab_server.services.cron import CronError
from xaclab_server.services.suites import ParamError

router = APIRouter(prefix="/api/v1", tags=["user"])


def matrix_created(matrix: Matrix, runs: list[Run]) -> MatrixCreated:
    return MatrixCreated(
        matrix_id=matrix.id,
        runs=[
            MatrixRun(
                run_id=r.id,
                machine_id=r.machine_id,
                suite=r.suite,
                profile=r.profile,
                job_ids=[j.id for j in r.jobs],
            )
            for r in runs
        ],
    )


@router.post("/matrices", status_code=status.HTTP_201_CREATED)
def create_matrix(
    body: MatrixIn,
    session: SessionDep,
    suites: SuitesDep,
    notifier: NotifierDep,
    git: LibxacGitDep,
    user: OperatorUser,
) -> MatrixCreated:
    """Expand suites × machines × profiles × factor values into runs and jobs; 422 if invalid."""
    try:
        matrix, runs = matrices.queue_matrix(
            session=session, suites=suites, spec=body, user_id=user.id, git=git
        )
    except ParamError as exc:
        raise HTTPException(422, str(exc)) from exc
    notifier.notify()
    return matrix_created(matrix, runs)


@router.get("/matrices/{matrix_id}")
def read_matrix(matrix_id: int, session: SessionDep) -> MatrixCreated:
    matrix = session.get(Matrix, matrix_id)
    if matrix is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"Matrix {matrix_id} does not exist.")
    runs = list(session.scalars(select(Run).where(Run.matrix_id == matrix_id).order_by(Run.id)))
    return matrix_created(matrix, runs)


def schedule_out(schedule: Schedule) -> ScheduleOut:
    return ScheduleOut(
        id=schedule.id,
        name=schedule.name,
        cron=schedule.cron,
        matrix=schedule.spec,
        enabled=schedule.enabled,
        next_run_at=schedule.next_run_at,
        last_run_at=schedule.last_run_at,
    )


@router.get("/schedules")
def list_schedules(session: SessionDep) -> list[ScheduleOut]:
    return [schedule_out(s) for s in session.scalars(select(Schedule).order_by(Schedule.id))]


@router.post("/schedules", status_code=status.HTTP_201_CREATED)
def create_schedule(
    body: ScheduleIn, session: SessionDep, suites: SuitesDep, git: LibxacGitDep, user: OperatorUser
) -> ScheduleOut:
    try:
        schedule = scheduler.create_schedule(
            session=session, suites=suites, body=body, user=user, git=git
        )
    except (CronError, ParamError) as exc:
        raise HTTPException(422, str(exc)) from exc
    return schedule_out(schedule)


def _schedule(session: SessionDep, schedule_id: int) -> Schedule:
    schedule = session.get(Schedule, schedule_id)
    if schedule is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"Schedule {schedule_id} does not exist.")
    return schedule


@router.patch("/schedules/{schedule_id}")
def update_schedule(
    schedule_id: int, body: SchedulePatch, session: SessionDep, _user: OperatorUser
) -> ScheduleOut:
    schedule = _schedule(session, schedule_id)
    try:
        scheduler.update_schedule(
            session=session, schedule=schedule, enabled=body.enabled, cron=body.cron
        )
    except CronError as exc:
        raise HTTPException(422, str(exc)) from exc
    return schedule_out(schedule)


@router.delete("/schedules/{schedule_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_schedule(schedule_id: int, session: SessionDep, _user: OperatorUser) -> None:
    session.delete(_schedule(session, schedule_id))
    session.commit()
