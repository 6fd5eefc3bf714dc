"""The run page's chart data: the page-touch chart and one chart per benchmark and metric."""

from typing import Any

from pydantic import BaseModel


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
    # Points drawn from results with a validity flag, or not judged (docs/validity.md).
    flagged: int = 0


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
    # Points drawn from results with a validity flag, or not judged (docs/validity.md).
    flagged: int = 0


class RunCharts(BaseModel):
    run_id: int
    status: str
    charts: list[SuiteChart]
