"""Bodies of the user API's run calls (docs/agent-protocol.md, "User API")."""

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from xaclab_server.schemas.job import JobDetail, JobOut


class RunIn(BaseModel):
    machine_id: int
    suite: str
    profile: str
    params: dict[str, Any] = Field(default_factory=dict)


class RunCreated(BaseModel):
    run_id: int
    job_ids: list[int]


class RunOut(BaseModel):
    id: int
    status: str
    suite: str
    profile: str
    params: dict[str, Any]
    machine_id: int
    created_at: datetime
    finished_at: datetime | None
    jobs: list[JobOut]


class RunEvent(BaseModel):
    """One server-sent event of ``GET /api/v1/runs/{id}/events``."""

    run_id: int
    status: str
    progress: float
    jobs: list[JobDetail]
