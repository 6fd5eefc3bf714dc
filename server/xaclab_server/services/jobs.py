"""The job state machine: queue a run, claim, report progress, finish.

Every transition can be resent: a claim returns the agent's unfinished job
again, and finishing a finished job with the same status changes nothing.
"""

from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from xaclab_server.models import Job, Machine, Run
from xaclab_server.models.base import utcnow
from xaclab_server.models.job import TERMINAL_STATES


class JobConflict(ValueError):
    """A transition the job's state does not allow; the message is a sentence (HTTP 409)."""


class JobNotFound(LookupError):
    pass


def create_run(
    *, session: Session, machine: Machine, suite: str, profile: str, params: dict[str, Any]
) -> Run:
    """Queue a run and its job (one per run for now) and commit."""
    run = Run(machine_id=machine.id, suite=suite, profile=profile, params=params, status="queued")
    run.jobs.append(
        Job(machine_id=machine.id, suite=suite, profile=profile, params=params, status="queued")
    )
    session.add(run)
    session.commit()
    return run


def claim_job(*, session: Session, machine_id: int) -> Job | None:
    """The machine's unfinished claimed job if any (a lost reply is harmless), else a new one."""
    running = session.scalar(
        select(Job)
        .where(Job.machine_id == machine_id, Job.status == "running")
        .order_by(Job.id)
        .limit(1)
    )
    if running is not None:
        session.commit()
        return running
    return claim_queued_job(session=session, machine_id=machine_id)


def claim_queued_job(*, session: Session, machine_id: int) -> Job | None:
    """Move the machine's oldest queued job to running; each queued job is taken exactly once.

    On PostgreSQL the candidate row is locked with ``FOR UPDATE SKIP LOCKED`` so
    concurrent claimers in any number of server processes pass over each other.
    SQLite ignores the lock clause and serialises writers; there the guarded
    UPDATE (``status = 'queued'``) decides, and a loser tries the next job.
    """
    while True:
        job_id = session.scalar(
            select(Job.id)
            .where(Job.machine_id == machine_id, Job.status == "queued")
            .order_by(Job.id)
            .limit(1)
            .with_for_update(skip_locked=True)
        )
        if job_id is None:
            session.commit()
            return None
        now = utcnow()
        taken = session.execute(
            update(Job)
            .where(Job.id == job_id, Job.status == "queued")
            .values(status="running", claimed_at=now, heartbeat_at=now)
            .execution_options(synchronize_session=False)
        )
        if taken.rowcount == 1:  # type: ignore[attr-defined]
            job = session.get_one(Job, job_id, populate_existing=True)
            refresh_run_status(session=session, run_id=job.run_id)
            session.commit()
            return job
        session.rollback()


def get_agent_job(*, session: Session, machine: Machine, job_id: int) -> Job:
    job = session.get(Job, job_id)
    if job is None:
        raise JobNotFound(f"Job {job_id} does not exist.")
    if job.machine_id != machine.id:
        raise JobConflict(f"Job {job_id} belongs to another machine.")
    return job


def record_progress(*, session: Session, job: Job, fraction: float, message: str) -> Job:
    if job.status != "running":
        raise JobConflict(f"Job {job.id} is {job.status}, not running.")
    job.progress = fraction
    job.message = message
    job.heartbeat_at = utcnow()
    session.commit()
    return job


def finish_job(*, session: Session, job: Job, status: str, message: str) -> Job:
    if job.status == status:
        return job
    if job.status in TERMINAL_STATES:
        raise JobConflict(f"Job {job.id} already finished as {job.status}, not {status}.")
    if job.status != "running":
        raise JobConflict(f"Job {job.id} is {job.status}; claim it before finishing it.")
    now = utcnow()
    job.status = status
    job.message = message
    job.heartbeat_at = now
    job.finished_at = now
    if status == "succeeded":
        job.progress = 1.0
    session.flush()
    refresh_run_status(session=session, run_id=job.run_id)
    session.commit()
    return job


def refresh_run_status(*, session: Session, run_id: int) -> None:
    """Derive the run's status from its jobs (docs/database.md): the run never sets its own."""
    run = session.get_one(Run, run_id)
    states = set(session.scalars(select(Job.status).where(Job.run_id == run_id)))
    if not states or states == {"queued"}:
        status = "queued"
    elif states <= set(TERMINAL_STATES):
        status = "failed" if "failed" in states else "succeeded"
    else:
        status = "running"
    if status != run.status:
        run.status = status
        run.finished_at = utcnow() if status in TERMINAL_STATES else None
