"""Bodies of the user API (docs/agent-protocol.md, "User API")."""

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field


class MachineOut(BaseModel):
    id: int
    name: str
    fingerprint_hash: str
    last_seen_at: datetime
    online: bool


class RunIn(BaseModel):
    machine_id: int
    suite: str
    profile: str
    params: dict[str, Any] = Field(default_factory=dict)


class RunCreated(BaseModel):
    run_id: int
    job_ids: list[int]


class JobOut(BaseModel):
    id: int
    status: str
    progress: float
    message: str


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


class ResultOut(BaseModel):
    id: int
    benchmark: str
    sut: str
    params: dict[str, Any]
    metric: str
    unit: str
    better: str
    n: int
    mean: float
    median: float
    min: float
    max: float
    stddev: float | None
    p99: float


class ChartSeries(BaseModel):
    label: str
    access: str
    advisory: bool
    values: list[float | None]


class FloorRow(BaseModel):
    benchmark: str
    metric: str
    params: dict[str, Any]
    unit: str
    n: int
    median: float
    mean: float
    p99: float


class PageTouchChart(BaseModel):
    """Data for the run page's chart: median time per page against n, and the OS floor."""

    run_id: int
    status: str
    unit: str | None
    n: list[int]
    series: list[ChartSeries]
    floor: list[FloorRow]
