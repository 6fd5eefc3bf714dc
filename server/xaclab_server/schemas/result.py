"""A stored result's summary, as ``GET /api/v1/runs/{id}/results`` gives it."""

from typing import Any

from pydantic import BaseModel


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
