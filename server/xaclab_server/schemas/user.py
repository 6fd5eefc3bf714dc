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
    approved: bool


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


class RunEvent(BaseModel):
    """One server-sent event of ``GET /api/v1/runs/{id}/events``."""

    run_id: int
    status: str
    progress: float
    jobs: list[JobDetail]


class ChartLine(BaseModel):
    label: str
    values: list[float | None]


class SuiteChart(BaseModel):
    """Medians of one benchmark's metric: against a numeric parameter, or per combination."""

    benchmark: str
    metric: str
    unit: str
    better: str
    x_param: str | None
    x: list[float]
    x_labels: list[str]
    series: list[ChartLine]


class RunCharts(BaseModel):
    run_id: int
    status: str
    charts: list[SuiteChart]
