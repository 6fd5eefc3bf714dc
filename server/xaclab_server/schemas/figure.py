"""A figure of results as the pages draw it and ``GET /api/v1/runs/{id}/charts`` gives it.

Every figure names what it shows in words: its title, both axes with their
units, and each series by its system (LIBXAC, Berkeley DB ...) and what sets
it apart from the others (``tree btree · advisory yes``).  A mark carries
the numbers behind it, its interval and its validity flags, so the table
under the figure and the API say the same.
"""

from typing import Any, Literal

from pydantic import BaseModel, Field

FigureKind = Literal["lines", "dots", "percentiles", "top_k"]
Scale = Literal["linear", "log"]
# median_ci: the 95% interval of the median (6 samples or more); range: the samples' min–max,
# for fewer; none: one sample.
IntervalKind = Literal["median_ci", "range", "none"]


class Mark(BaseModel):
    x: float | None = None  # the numeric x; None on a dot plot, whose rows are its series
    y: float
    low: float | None = None
    high: float | None = None
    interval: IntervalKind = "none"
    n: int = 0
    flags: dict[str, str] | None = Field(default_factory=dict)  # None: not judged
    result_ids: list[int] = Field(default_factory=list)
    history_url: str | None = None  # this mark's series over time


class Series(BaseModel):
    system: str  # the identifier results carry ("bdb")
    system_title: str  # as people write it ("Berkeley DB")
    variant: dict[str, Any]  # what sets it apart from the other series of its system
    label: str
    colour: str  # the system's colour, or a shade of it for a variant
    marker: str
    dash: str = ""  # SVG stroke-dasharray of its line; "" is solid
    marks: list[Mark]


class Reference(BaseModel):
    """A horizontal line: a cost the series are judged against (the operating system's floor)."""

    label: str
    value: float
    colour: str
    dash: str = "7 4"  # SVG stroke-dasharray: each reference of a figure has its own
    flags: dict[str, str] | None = Field(default_factory=dict)


class Curve(BaseModel):
    """A fitted model drawn over its series (page_touch's T(n)/n = slope + c/n)."""

    label: str
    colour: str
    formula: str
    xs: list[float]
    ys: list[float]


class Tick(BaseModel):
    value: float
    label: str


class Figure(BaseModel):
    id: str
    kind: FigureKind
    title: str
    benchmark: str
    metric: str
    unit: str
    better: str
    x_title: str
    y_title: str
    x_scale: Scale = "linear"
    y_scale: Scale = "linear"
    x_ticks: list[Tick] = Field(default_factory=list)  # fixed ticks (percentiles); else automatic
    common: str = ""  # what every mark shares, in words
    series: list[Series]
    references: list[Reference] = Field(default_factory=list)
    curves: list[Curve] = Field(default_factory=list)
    flagged: int = 0  # marks from flagged or not judged results
    notes: list[str] = Field(default_factory=list)


class SingleValue(BaseModel):
    """A measure with one value in its run: a table cell, not a chart."""

    benchmark: str
    system: str
    system_title: str
    params: dict[str, Any]
    label: str  # the params in words
    metric: str
    unit: str
    better: str
    value: float
    low: float | None
    high: float | None
    interval: IntervalKind
    n: int
    flags: dict[str, str] | None
    result_id: int
    history_url: str


class Section(BaseModel):
    """One benchmark of a run: its figures, then its single values."""

    benchmark: str
    title: str
    figures: list[Figure]
    single_values: list[SingleValue]


class RunFigures(BaseModel):
    run_id: int
    status: str
    suite: str
    sections: list[Section]
