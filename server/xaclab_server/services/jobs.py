"""The job state machine: queue a run, claim, heartbeat, report progress, finish, cancel.

Every transition can be resent: a claim returns the agent's unfinished job
again, finishing a finished job with the same status changes nothing, and a
log chunk is stored once per sequence number.  Leases are enforced on the
claim path (:func:`expire_leases`), so no separate sweeper process is needed:
agents' claims and each process's shared claim poller sweep, at most once per
``claim_poll_seconds`` per process.
"""

from datetime import timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from xaclab_server.models import Job, JobLog, Machine, Run
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


def expire_leases(*, session: Session, lease_seconds: float, max_attempts: int) -> list[int]:
    """Requeue (or fail, after ``max_attempts`` claims) running jobs whose lease expired.

    A job whose cancellation was requested is cancelled instead.  Each update
    is guarded by the state it read, so concurrent sweepers agree.  Returns
    the ids of the jobs that changed.
    """
    now = utcnow()
    cutoff = now - timedelta(seconds=lease_seconds)
    stale = session.scalars(
        select(Job).where(Job.status == "running", Job.heartbeat_at < cutoff).order_by(Job.id)
    ).all()
    changed = []
    for job in stale:
        silent = f"no heartbeat for {lease_seconds:g} s (lease expired) on attempt {job.attempt}"
        values: dict[str, Any]
        if job.cancel_requested:
            values = {"status": "cancelled", "finished_at": now, "message": f"cancelled; {silent}"}
        elif job.attempt < max_attempts:
            values = {"status": "queued", "claimed_at": None, "message": f"requeued: {silent}"}
        else:
            values = {"status": "failed", "finished_at": now, "message": f"failed: {silent}"}
        done = session.execute(
            update(Job)
            .where(Job.id == job.id, Job.status == "running", Job.heartbeat_at == job.heartbeat_at)
            .values(**values)
            .execution_options(synchronize_session=False)
        )
        if done.rowcount == 1:  # type: ignore[attr-defined]
            changed.append(job.id)
            session.flush()
            refresh_run_status(session=session, run_id=job.run_id)
    session.commit()
    if changed:
        session.expire_all()
    return changed


def machines_with_queued_jobs(
    *,
    session: Session,
    machine_ids: set[int],
    lease_seconds: float | None = None,
    max_attempts: int = 2,
) -> set[int]:
    """Sweep expired leases (with ``lease_seconds``), then which of ``machine_ids`` have a
    queued job (one query)."""
    if lease_seconds is not None:
        expire_leases(session=session, lease_seconds=lease_seconds, max_attempts=max_attempts)
    found = set(
        session.scalars(
            select(Job.machine_id)
            .where(Job.status == "queued", Job.machine_id.in_(sorted(machine_ids)))
            .distinct()
        )
    )
    session.commit()
    return found


def claim_job(
    *,
    session: Session,
    machine_id: int,
    lease_seconds: float | None = None,
    max_attempts: int = 2,
) -> Job | None:
    """The machine's unfinished claimed job if any (a lost reply is harmless), else a new one.

    With ``lease_seconds``, expired leases (of every machine) are swept first.
    """
    if lease_seconds is not None:
        expire_leases(session=session, lease_seconds=lease_seconds, max_attempts=max_attempts)
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
            .values(status="running", claimed_at=now, heartbeat_at=now, attempt=Job.attempt + 1)
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


def heartbeat(*, session: Session, job: Job) -> Job:
    """Extend the lease of a running job; the caller replies with ``cancel_requested``."""
    if job.status != "running":
        raise JobConflict(f"Job {job.id} is {job.status}, not running.")
    job.heartbeat_at = utcnow()
    session.commit()
    return job


def cancel_job(*, session: Session, job: Job) -> Job:
    """A queued job is cancelled at once; a running one when its agent has stopped it."""
    if job.status == "cancelled" or (job.status == "running" and job.cancel_requested):
        return job
    if job.status in TERMINAL_STATES:
        raise JobConflict(f"Job {job.id} already finished as {job.status}.")
    job.cancel_requested = True
    if job.status == "queued":
        now = utcnow()
        job.status = "cancelled"
        job.message = "cancelled before it started"
        job.finished_at = now
        session.flush()
        refresh_run_status(session=session, run_id=job.run_id)
    session.commit()
    return job


def record_log(*, session: Session, job: Job, seq: int, stream: str, text: str) -> bool:
    """Store a log chunk once per ``seq``; False when that chunk was already stored."""
    if job.status == "queued":
        raise JobConflict(f"Job {job.id} is queued; claim it before sending its log.")
    exists = session.scalar(select(JobLog.id).where(JobLog.job_id == job.id, JobLog.seq == seq))
    if exists is not None:
        session.commit()
        return False
    session.add(JobLog(job_id=job.id, seq=seq, stream=stream, text=text))
    try:
        session.commit()
    except IntegrityError:  # the same chunk raced in from a retry
        session.rollback()
        return False
    return True


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
        if "cancelled" in states and "failed" not in states:
            status = "cancelled"
    else:
        status = "running"
    if status != run.status:
        run.status = status
        run.finished_at = utcnow() if status in TERMINAL_STATES else None
