"""Snapshots of a run for its live page: each job's progress, ETA and log tail.

The event stream (``GET /api/v1/runs/{id}/events``) sends a snapshot
whenever it differs from the last one sent.  The ETA is the running job's
elapsed time scaled by its remaining fraction; the log tail is the last
lines of the job's streamed log (``job_logs``), or its progress message
when the agent streamed none.
"""

from sqlalchemy import select
from sqlalchemy.orm import Session

from xaclab_server.models import Job, JobLog, Run
from xaclab_server.models.base import utcnow
from xaclab_server.schemas.job import JobDetail
from xaclab_server.schemas.run import RunEvent

TAIL_LINES = 20
TAIL_CHUNKS = 4
MAX_JOBS = 500
# Succeeded and queued jobs have nothing to watch; the others show why they are as they are.
WITH_LOG = frozenset({"running", "failed", "cancelled"})


def eta_seconds(job: Job) -> float | None:
    if job.status != "running" or job.claimed_at is None or not 0 < job.progress < 1:
        return None
    elapsed = (utcnow() - job.claimed_at).total_seconds()
    return max(0.0, elapsed * (1 - job.progress) / job.progress)


def log_tail(session: Session, job: Job) -> list[str]:
    chunks = session.scalars(
        select(JobLog.text)
        .where(JobLog.job_id == job.id)
        .order_by(JobLog.seq.desc())
        .limit(TAIL_CHUNKS)
    ).all()
    if not chunks:
        return [job.message] if job.message else []
    lines = "".join(reversed(chunks)).splitlines()
    return lines[-TAIL_LINES:]


def job_detail(session: Session, job: Job, *, with_log: bool) -> JobDetail:
    return JobDetail(
        id=job.id,
        run_id=job.run_id,
        machine_id=job.machine_id,
        suite=job.suite,
        profile=job.profile,
        status=job.status,
        progress=job.progress,
        message=job.message,
        params=job.params,
        created_at=job.created_at,
        claimed_at=job.claimed_at,
        finished_at=job.finished_at,
        eta_seconds=eta_seconds(job),
        log_tail=log_tail(session, job) if with_log else [],
    )


def snapshot(*, session: Session, run: Run) -> RunEvent:
    jobs = session.scalars(
        select(Job).where(Job.run_id == run.id).order_by(Job.id).limit(MAX_JOBS)
    ).all()
    details = [job_detail(session, j, with_log=j.status in WITH_LOG) for j in jobs]
    progress = sum(j.progress for j in jobs) / len(jobs) if jobs else 0.0
    return RunEvent(run_id=run.id, status=run.status, progress=progress, jobs=details)
