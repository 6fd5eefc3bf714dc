"""The reply of ``GET /api/v1/compare``, which the comparison page shows too."""

from typing import Any

from pydantic import BaseModel


class PairOut(BaseModel):
    suite: str
    benchmark: str
    sut: str
    metric: str
    unit: str
    better: str
    params: dict[str, Any]
    n_a: int
    n_b: int
    stat_a: float
    stat_b: float
    ratio: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float
    test: str
    significant: bool
    verdict: str
    binned: bool


class ComparisonOut(BaseModel):
    kind: str
    a: str
    b: str
    statistic: str
    resamples: int
    seed: int
    alpha: float
    note: str
    only_a: int
    only_b: int
    significant: int
    pairs: list[PairOut]
