"""The run page's chart: page_touch time per page against n (thesis figures 4-1 and 4-3).

Four series, read and write, each with and without advisory
(``setPageAccess``), from the median of each result; results of ``sut`` "os"
are the floor and go to a table instead.
"""

from collections.abc import Sequence
from typing import Any

from xaclab_server.models import Result, Run
from xaclab_server.schemas.chart import ChartSeries, FloorRow, PageTouchChart

BENCHMARK = "page_touch"
SERIES = (("read", False), ("read", True), ("write", False), ("write", True))


def page_touch_chart(*, run: Run, results: Sequence[Result]) -> PageTouchChart:
    points: dict[tuple[str, bool], dict[int, float]] = {key: {} for key in SERIES}
    units: set[str] = set()
    floor: list[FloorRow] = []
    flagged: dict[tuple[str, bool], dict[int, bool]] = {key: {} for key in SERIES}
    for result in sorted(results, key=lambda r: r.id):
        if result.sut == "os":
            floor.append(_floor_row(result))
            continue
        if result.benchmark != BENCHMARK:
            continue
        n = result.params.get("n")
        access = result.params.get("access")
        if isinstance(n, bool) or not isinstance(n, int | float) or n <= 0:
            continue
        key = (str(access), _truthy(result.params.get("advisory", False)))
        if key not in points:
            continue
        # A later result for the same point (a resent run of it) replaces an earlier one.
        points[key][int(n)] = result.median
        flagged[key][int(n)] = result.flags is None or bool(result.flags)
        units.add(result.unit)
    ns = sorted({n for series in points.values() for n in series})
    return PageTouchChart(
        run_id=run.id,
        status=run.status,
        unit=units.pop() if len(units) == 1 else None,
        n=ns,
        series=[
            ChartSeries(
                label=f"{access}{' + advisory' if advisory else ''}",
                access=access,
                advisory=advisory,
                values=[points[(access, advisory)].get(n) for n in ns],
            )
            for access, advisory in SERIES
        ],
        floor=floor,
        flagged=sum(sum(f.values()) for f in flagged.values()),
    )


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def _floor_row(result: Result) -> FloorRow:
    return FloorRow(
        benchmark=result.benchmark,
        metric=result.metric,
        params=result.params,
        unit=result.unit,
        n=result.n,
        median=result.median,
        mean=result.mean,
        p99=result.p99,
    )
