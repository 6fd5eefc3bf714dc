"""User API: cancelling a job and reading its streamed log."""

from fastapi import APIRouter, HTTPException, status
from sqlalchemy import select

from xaclab_server.api.deps import SessionDep
from xaclab_server.core.openapi import CONFLICT
from xaclab_server.models import Job, JobLog
from xaclab_server.schemas.job import CancelOut, LogChunkOut
from xaclab_server.services import jobs

router = APIRouter(prefix="/api/v1", tags=["user"])


def _job(session: SessionDep, job_id: int) -> Job:
    job = session.get(Job, job_id)
    if job is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"Job {job_id} does not exist.")
    return job


@router.post("/jobs/{job_id}/cancel", responses=CONFLICT)
def cancel_job(session: SessionDep, job_id: int) -> CancelOut:
    """Queued: cancelled now.  Running: its agent stops it at its next heartbeat."""
    job = _job(session, job_id)
    try:
        jobs.cancel_job(session=session, job=job)
    except jobs.JobConflict as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from exc
    return CancelOut(job_id=job.id, status=job.status, cancel_requested=job.cancel_requested)


@router.get("/jobs/{job_id}/logs")
def read_job_logs(session: SessionDep, job_id: int) -> list[LogChunkOut]:
    _job(session, job_id)
    chunks = session.scalars(select(JobLog).where(JobLog.job_id == job_id).order_by(JobLog.seq))
    return [LogChunkOut(seq=c.seq, stream=c.stream, text=c.text) for c in chunks]
