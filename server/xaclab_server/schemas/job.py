"""Bodies of the user API's job calls, and jobs as runs and the queue show them."""

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field


class JobOut(BaseModel):
    id: int
    status: str
    progress: float
    message: str


class JobDetail(BaseModel):
    id: int
    run_id: int
    machine_id: int
    suite: str
    profile: str
    status: str
    progress: float
    message: str
    params: dict[str, Any]
    created_at: datetime
    claimed_at: datetime | None
    finished_at: datetime | None
    eta_seconds: float | None
    log_tail: list[str] = Field(default_factory=list)


class CancelOut(BaseModel):
    job_id: int
    status: str
    cancel_requested: bool


class LogChunkOut(BaseModel):
    seq: int
    stream: str
    text: str
