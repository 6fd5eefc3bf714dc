"""Bodies of the user API's schedule calls: a run matrix queued on a cron schedule."""

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, Field

from xaclab_server.schemas.matrix import MatrixIn


class ScheduleIn(BaseModel):
    name: Annotated[str, Field(min_length=1, max_length=100)]
    cron: Annotated[str, Field(min_length=9, max_length=200)]
    matrix: MatrixIn
    enabled: bool = True


class SchedulePatch(BaseModel):
    enabled: bool | None = None
    cron: Annotated[str | None, Field(min_length=9, max_length=200)] = None


class ScheduleOut(BaseModel):
    id: int
    name: str
    cron: str
    matrix: dict[str, Any]
    enabled: bool
    next_run_at: datetime
    last_run_at: datetime | None
