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
    q_value: float  # Benjamini–Hochberg, across this comparison's pairs
    test: str
    significant: bool
    in_doubt: bool  # a side is flagged: never called plainly different
    verdict: str
    binned: bool
    flags_a: dict[str, str]  # validity flag -> why (docs/validity.md)
    flags_b: dict[str, str]
    median_ci_a: float | None  # half-width of the 95% interval of the median, percent
    median_ci_b: float | None
    detectable: float | None  # minimum detectable effect, percent
    where_a: str  # machine and epoch
    where_b: str
    fingerprint_differences: list[str]  # identity fields that differ (cross-machine)


class ComparisonOut(BaseModel):
    kind: str
    a: str
    b: str
    statistic: str
    resamples: int
    seed: int
    alpha: float
    correction: str
    cross_machine: bool
    fingerprint_differences: list[str]
    note: str
    only_a: int
    only_b: int
    significant: int
    in_doubt: int
    pairs: list[PairOut]
