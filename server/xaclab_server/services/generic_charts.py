"""A chart per benchmark and metric for any suite: the median of each result.

The x axis is the numeric parameter with the most distinct values (``n``
first when it varies); every other varying parameter, with the job's factor
values counted as parameters, makes a series.  A benchmark with no varying
numeric parameter gets one point per parameter combination instead.  Each
chart counts its points drawn from flagged results, which the run page says
under the chart.
"""

import json
from collections.abc import Sequence
from typing import Any

from xaclab_server.schemas.chart import ChartLine, SuiteChart

MAX_CHARTS = 60
MAX_SERIES = 16


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _label(params: dict[str, Any], keys: Sequence[str]) -> str:
    return ", ".join(f"{k}={json.dumps(params.get(k))}" for k in keys) or "all"


def suite_charts(rows: Sequence[tuple[Any, dict[str, Any]]]) -> list[SuiteChart]:
    """``rows`` are (result, params incl. the job's factors), in result id order."""
    groups: dict[tuple[str, str, str, str], list[tuple[Any, dict[str, Any]]]] = {}
    for result, params in rows:
        # The system under test is one more thing that may vary within a benchmark.
        merged = {**params, "sut": result.sut}
        key = (result.benchmark, result.metric, result.unit, result.better)
        groups.setdefault(key, []).append((result, merged))
    charts = []
    for (benchmark, metric, unit, better), members in list(groups.items())[:MAX_CHARTS]:
        charts.append(_chart(benchmark, metric, unit, better, members))
    return charts


def _chart(
    benchmark: str,
    metric: str,
    unit: str,
    better: str,
    members: list[tuple[Any, dict[str, Any]]],
) -> SuiteChart:
    keys = sorted({k for _, p in members for k in p})
    varying = [k for k in keys if len({json.dumps(p.get(k)) for _, p in members}) > 1]
    numeric = [k for k in varying if all(_is_number(p.get(k)) for _, p in members)]
    x_param = None
    if numeric:
        x_param = (
            "n" if "n" in numeric else max(numeric, key=lambda k: len({p[k] for _, p in members}))
        )
    series_keys = [k for k in varying if k != x_param]
    if x_param is None:
        labels = list(dict.fromkeys(_label(p, series_keys) for _, p in members))
        values: dict[str, float] = {}
        doubtful: dict[str, bool] = {}
        for result, p in members:
            values[_label(p, series_keys)] = result.median
            doubtful[_label(p, series_keys)] = _flagged(result)
        return SuiteChart(
            benchmark=benchmark,
            metric=metric,
            unit=unit,
            better=better,
            x_param=None,
            x=[float(i) for i in range(len(labels))],
            x_labels=labels,
            series=[ChartLine(label=metric, values=[values[label] for label in labels])],
            flagged=sum(doubtful.values()),
        )
    xs = sorted({float(p[x_param]) for _, p in members})
    lines: dict[str, dict[float, float]] = {}
    doubts: dict[str, dict[float, bool]] = {}
    for result, p in members:
        # A later result for the same point replaces an earlier one.
        lines.setdefault(_label(p, series_keys), {})[float(p[x_param])] = result.median
        doubts.setdefault(_label(p, series_keys), {})[float(p[x_param])] = _flagged(result)
    shown = list(lines.items())[:MAX_SERIES]
    return SuiteChart(
        benchmark=benchmark,
        metric=metric,
        unit=unit,
        better=better,
        x_param=x_param,
        x=xs,
        x_labels=[f"{x:g}" for x in xs],
        series=[
            ChartLine(label=label, values=[points.get(x) for x in xs]) for label, points in shown
        ],
        flagged=sum(sum(doubts[label].values()) for label, _points in shown),
    )


def _flagged(result: Any) -> bool:
    """A point from a result with a validity flag, or one not judged (docs/validity.md)."""
    return result.flags is None or bool(result.flags)
