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
    epoch: int
    # Validity (docs/validity.md): flag -> why; None when stored before flags existed.
    flags: dict[str, str] | None
    median_ci_low: float | None  # the 95% interval of the median
    median_ci_high: float | None
    median_ci_percent: float | None  # its half-width relative to the median
    detectable: float | None  # minimum detectable effect against a run as precise, percent
    write_cache: str | None  # on, off, kernel-on, kernel-off (the scope of the setting)
