"""The reply of ``GET /api/v1/history``: one series over time, which the history page draws."""

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from xaclab_server.schemas.figure import IntervalKind
from xaclab_server.schemas.machine import EpochOut


class HistoryPoint(BaseModel):
    run_id: int
    result_id: int
    at: datetime  # when the result was stored
    epoch: int
    median: float
    low: float | None  # the 95% interval of the median, or the samples' range below 6
    high: float | None
    interval: IntervalKind
    n: int
    flags: dict[str, str] | None  # None: not judged
    library_version: str
    git_revision: str


class ChangePointOut(BaseModel):
    """A change in the series' level (issue K's detector fills these; none before it)."""

    at: datetime
    run_before: int | None
    run_after: int | None
    change_percent: float | None
    low_percent: float | None
    high_percent: float | None
    description: str


class HistoryOut(BaseModel):
    machine_id: int
    machine: str
    suite: str
    benchmark: str
    sut: str
    system_title: str
    metric: str
    unit: str
    better: str
    params: dict[str, Any]
    title: str
    y_title: str
    epochs: list[EpochOut]
    points: list[HistoryPoint]
    change_points: list[ChangePointOut]
    truncated: bool  # only the newest points are given
