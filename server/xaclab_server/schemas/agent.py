"""Bodies of the agent API (docs/agent-protocol.md)."""

from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import BaseModel, Field

MAX_RESULTS_PER_UPLOAD = 1000
MAX_LOG_CHUNK = 64 * 1024


class RegisterIn(BaseModel):
    # Absent or empty: the machine is registered pending an admin's approval.
    registration_token: Annotated[str | None, Field(max_length=1024)] = None
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9._-]{1,64}$")]
    fingerprint: dict[str, Any]


class RegisterOut(BaseModel):
    machine_id: int
    agent_token: str
    approved: bool = True


class ClaimOut(BaseModel):
    job_id: int
    run_id: int
    suite: str
    profile: str
    params: dict[str, Any]


class ProgressIn(BaseModel):
    fraction: Annotated[float, Field(ge=0, le=1)]
    message: Annotated[str, Field(max_length=500)] = ""


class JobStateOut(BaseModel):
    job_id: int
    status: str
    progress: float
    message: str
    cancel: bool = False


class LogIn(BaseModel):
    seq: Annotated[int, Field(ge=1, le=1_000_000)]
    stream: Literal["stdout", "stderr", "agent"]
    text: Annotated[str, Field(max_length=MAX_LOG_CHUNK)]


class LogOut(BaseModel):
    stored: bool


class UploadIn(BaseModel):
    upload_id: UUID
    # Any, not dict: the result-format schema words the errors for every result.
    results: Annotated[list[Any], Field(max_length=MAX_RESULTS_PER_UPLOAD)]


class UploadOut(BaseModel):
    stored: int
    duplicate: bool


class FinishIn(BaseModel):
    status: Literal["succeeded", "failed", "cancelled"]
    message: Annotated[str, Field(max_length=500)] = ""
