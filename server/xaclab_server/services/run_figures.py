"""A run's figures: for each benchmark, the charts that fit its data, and its single values.

Each benchmark's results are grouped by metric and unit, and each group is
drawn as what it is:

- **one value** (the floor's cost of a fault, log syncs per insert): a table
  cell, never a chart;
- **a distribution** (every result has :data:`.distributions.MIN_SAMPLES`
  samples or more: insert latencies): percentiles p50 … p99.9 and the
  maximum, and the k-th most expensive (thesis figure 5-3);
- **a measure against a numeric parameter** with at least three values
  (time per page against n): lines, one per system and variant, with the
  95 % interval of each median; results of the operating system (``os``)
  with the same metric and unit are drawn as reference lines (LIBXAC's
  floor), and page_touch's fitted model (benchmark ``fit``: T(n)/n =
  slope + c/n) over the series it was fitted to;
- **anything else**: a dot plot, one row per system and variant, with
  interval whiskers.

A series is one system (LIBXAC, Berkeley DB …, the suites say which) and
what sets it apart from that system's other results (``tree``, ``mode``);
params every result of the figure shares are said once under it.  The
fitted model's own results are single values.
"""

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from xaclab_contracts.roles import ParamRoles

from xaclab_server.models import Job, Result, Run
from xaclab_server.schemas.figure import (
    Curve,
    Figure,
    FigureKind,
    Mark,
    Reference,
    RunFigures,
    Section,
    Series,
    SingleValue,
    Tick,
)
from xaclab_server.schemas.figure import (
    Scale as ScaleKind,
)
from xaclab_server.services.comparisons import matched_params
from xaclab_server.services.distributions import (
    MIN_SAMPLES,
    distribution,
    nines,
    percentile_label,
)
from xaclab_server.services.label_keys import label_keys
from xaclab_server.services.result_views import flags_of, result_interval
from xaclab_server.services.series_keys import canonical, history_url, series_key, series_params
from xaclab_server.services.suites import Suite
from xaclab_server.services.systems import (
    FLOOR,
    Systems,
    metric_words,
    params_words,
    systems_of,
    title_of,
    unit_words,
    variant_style,
)

MODEL_BENCHMARK = "fit"
MODEL_INTERCEPT = "c"
MODEL_SLOPES = ("a", "b")
MIN_LINE_VALUES = 3  # a numeric param with fewer values is a category
TOP_SUFFIX = "_top"  # a program's own record of its most expensive samples
LOG_SPREAD = 20.0  # positive values spread wider than this get a log axis
CURVE_POINTS = 48


@dataclass(frozen=True, slots=True)
class Item:
    result: Result
    params: dict[str, Any]  # the series params: matched params less the observed ones
    history: str


@dataclass(slots=True)
class Context:
    suite: Suite | None
    systems: Systems
    items: list[Item]


def run_rows(*, session: Session, run: Run) -> list[tuple[Result, dict[str, Any]]]:
    """The run's results in id order, each with its matched params (its own, its job's
    factors, the write cache with its scope)."""
    found = session.execute(
        select(Result, Job.params)
        .join(Job, Job.id == Result.job_id)
        .where(Result.run_id == run.id)
        .order_by(Result.id)
    ).all()
    return [(r, matched_params(r, job_params)) for r, job_params in found]


def figures_of_run(
    *, session: Session, run: Run, suites: dict[str, Suite], roles: ParamRoles
) -> RunFigures:
    rows = run_rows(session=session, run=run)
    return run_figures(run=run, rows=rows, suites=suites, roles=roles)


def run_figures(
    *,
    run: Run,
    rows: Sequence[tuple[Result, dict[str, Any]]],
    suites: dict[str, Suite],
    roles: ParamRoles,
) -> RunFigures:
    """``rows``: the run's results with their matched params, in id order."""
    latest: dict[tuple[str, ...], Item] = {}
    for result, params in rows:
        kept = series_params(result.suite, params, roles)
        key = (result.benchmark, result.metric, result.unit, result.sut, canonical(kept))
        # A later result for the same point (a resent run of it) replaces an earlier one.
        latest[key] = Item(result, kept, history_url(series_key(result, params, roles)))
    ctx = Context(suites.get(run.suite), systems_of(suites), list(latest.values()))
    benchmarks = list(dict.fromkeys(i.result.benchmark for i in ctx.items))
    sections = [
        _section(b, [i for i in ctx.items if i.result.benchmark == b], ctx) for b in benchmarks
    ]
    return RunFigures(run_id=run.id, status=run.status, suite=run.suite, sections=sections)


def _section(benchmark: str, items: list[Item], ctx: Context) -> Section:
    groups: dict[tuple[str, str, str], list[Item]] = {}
    for item in items:
        r = item.result
        groups.setdefault((r.metric, r.unit, r.better), []).append(item)
    figures: list[Figure] = []
    singles: list[SingleValue] = []
    distributions = {
        metric
        for (metric, _unit, _better), members in groups.items()
        if len(members) > 1 and all(i.result.n >= MIN_SAMPLES for i in members)
    }
    for (metric, unit, better), members in groups.items():
        if benchmark == MODEL_BENCHMARK or len(members) == 1:
            singles.extend(_single(i) for i in members)
            continue
        if metric.endswith(TOP_SUFFIX) and metric.removesuffix(TOP_SUFFIX) in distributions:
            continue  # its base metric's k-th most expensive draws the same tail from every sample
        if metric in distributions:
            if not metric.endswith(TOP_SUFFIX):
                figures.append(_percentiles(benchmark, metric, unit, better, members, ctx))
            figures.append(_top_k(benchmark, metric, unit, better, members, ctx))
            continue
        x_param = _x_param(members)
        if x_param is None:
            figures.append(_dots(benchmark, metric, unit, better, members, ctx))
        else:
            figures.append(_lines(benchmark, metric, unit, better, members, x_param, ctx))
    systems = ctx.systems.order({i.result.sut for i in items})
    title = f"{benchmark}: " + ", ".join(title_of(s) for s in systems)
    return Section(benchmark=benchmark, title=title, figures=figures, single_values=singles)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _x_param(items: list[Item]) -> str | None:
    keys = {k for i in items for k in i.params}
    numeric = []
    for key in sorted(keys):
        values = [i.params.get(key) for i in items]
        if all(_number(v) for v in values) and len(set(values)) >= MIN_LINE_VALUES:
            numeric.append(key)
    if not numeric:
        return None
    if "n" in numeric:
        return "n"
    return max(numeric, key=lambda k: len({i.params[k] for i in items}))


def _doubtful(result: Result) -> bool:
    return result.flags is None or bool(result.flags)


def _mark(item: Item, *, x: float | None = None, y: float | None = None) -> Mark:
    low, high, kind = result_interval(item.result)
    return Mark(
        x=x,
        y=item.result.median if y is None else y,
        low=low if y is None else None,
        high=high if y is None else None,
        interval=kind if y is None else "none",
        n=item.result.n,
        flags=flags_of(item.result),
        result_ids=[item.result.id],
        history_url=item.history,
    )


def _single(item: Item) -> SingleValue:
    r = item.result
    low, high, kind = result_interval(r)
    words = params_words(item.params)
    return SingleValue(
        benchmark=r.benchmark,
        system=r.sut,
        system_title=title_of(r.sut),
        params=item.params,
        label=words or "–",
        metric=r.metric,
        unit=r.unit,
        better=r.better,
        value=r.median,
        low=low,
        high=high,
        interval=kind,
        n=r.n,
        flags=flags_of(r),
        result_id=r.id,
        history_url=item.history,
    )


def _varying(items: list[Item], left_out: str | None) -> list[str]:
    keys = sorted({k for i in items for k in i.params} - {left_out})
    return [k for k in keys if len({json.dumps(i.params.get(k)) for i in items}) > 1]


def _series_groups(
    items: list[Item], ctx: Context, x_param: str | None
) -> list[tuple[Series, list[Item]]]:
    """One series per system and variant: the params that vary among that system's results,
    and those on which the systems differ (a search-tree run from before the suite's default
    durability: the LIBXAC trees nondurable, the baselines durable), so no label hides what
    sets its series apart; of those, label_keys says which a label names."""
    out: list[tuple[Series, list[Item]]] = []
    apart = _systems_apart(items, x_param)
    for system in ctx.systems.order({i.result.sut for i in items}):
        own = [i for i in items if i.result.sut == system]
        varying = sorted(set(_varying(own, x_param)) | apart)
        variants: dict[str, list[Item]] = {}
        for item in own:
            variant = {k: item.params.get(k) for k in varying}
            variants.setdefault(canonical(variant), []).append(item)
        style = ctx.systems.style(system)
        parsed = [json.loads(t) for t in variants]
        named = label_keys(parsed, varying, always=apart)
        for index, (variant, members) in enumerate(zip(parsed, variants.values(), strict=True)):
            words = params_words({k: v for k, v in variant.items() if v is not None and k in named})
            colour, shape, dash = variant_style(style.colour, index)
            series = Series(
                system=system,
                system_title=style.title,
                variant=variant,
                label=f"{style.title} · {words}" if words else style.title,
                colour=colour,
                marker=shape,
                dash=dash,
                marks=[],
            )
            out.append((series, members))
    return out


def _systems_apart(items: list[Item], x_param: str | None) -> set[str]:
    """The params every item has, one value within each system, another between systems."""
    systems = {i.result.sut for i in items}
    if len(systems) < 2:
        return set()
    keys = set.intersection(*(set(i.params) for i in items)) - {x_param}
    found = set()
    for key in keys:
        values = [
            {json.dumps(i.params[key]) for i in items if i.result.sut == system}
            for system in systems
        ]
        if all(len(v) == 1 for v in values) and len(set.union(*values)) > 1:
            found.add(key)
    return found


def _common(items: list[Item], left_out: set[str]) -> str:
    """The params every item has with one value, in words."""
    shared = {}
    for key in sorted({k for i in items for k in i.params} - left_out):
        if all(key in i.params for i in items):
            if len({json.dumps(i.params[key]) for i in items}) == 1:
                shared[key] = items[0].params[key]
    return params_words(shared)


def _varying_anywhere(items: list[Item], x_param: str | None) -> set[str]:
    found: set[str] = set()
    for system in {i.result.sut for i in items}:
        found.update(_varying([i for i in items if i.result.sut == system], x_param))
    return found | ({x_param} if x_param else set())


def _figure_id(benchmark: str, metric: str, unit: str, kind: str) -> str:
    return "-".join(
        "".join(c if c.isalnum() else "_" for c in part) for part in (benchmark, metric, unit, kind)
    )


def _scale(values: list[float]) -> ScaleKind:
    positive = [v for v in values if v > 0]
    if positive and len(positive) == len(values) and max(positive) / min(positive) > LOG_SPREAD:
        return "log"
    return "linear"


def _param_words(name: str, ctx: Context) -> str:
    """A param as an axis title: its name and the first clause of the suite's help for it."""
    help_text = ""
    if ctx.suite is not None:
        decl = ctx.suite.params.get(name)
        recorded = ctx.suite.declaration.get("recorded", {}).get(name, {})
        help_text = decl.help if decl is not None else str(recorded.get("help", ""))
    clause = help_text.split("(")[0].split(";")[0].split(".")[0].split(":")[0].strip()
    words = name.replace("_", " ")
    return f"{words}: {clause[:1].lower()}{clause[1:]}" if clause else words


def _y_title(metric: str, unit: str, better: str) -> str:
    return f"{metric_words(metric)} ({unit_words(unit)}; {better} is better)"


def _flagged(items: list[Item]) -> int:
    return sum(_doubtful(i.result) for i in items)


def _figure(
    kind: FigureKind,
    key: tuple[str, str, str, str],
    items: list[Item],
    series: list[Series],
    x_param: str | None = None,
    **fields: Any,
) -> Figure:
    """A figure of one benchmark's metric (``key``: benchmark, metric, unit, better): what
    every figure has, and ``fields`` (title, axes, scales, notes ...)."""
    benchmark, metric, unit, better = key
    return Figure(
        id=_figure_id(benchmark, metric, unit, kind),
        kind=kind,
        benchmark=benchmark,
        metric=metric,
        unit=unit,
        better=better,
        common=_common(items, _varying_anywhere(items, x_param)),
        series=series,
        flagged=_flagged(items),
        **fields,
    )


def _dots(
    benchmark: str, metric: str, unit: str, better: str, items: list[Item], ctx: Context
) -> Figure:
    series = []
    for s, members in _series_groups(items, ctx, None):
        s.marks = [_mark(i) for i in members]
        series.append(s)
    values = [m.y for s in series for m in s.marks]
    return _figure(
        "dots",
        (benchmark, metric, unit, better),
        items,
        series,
        title=f"{metric_words(metric).capitalize()} of each system and variant",
        x_title=_y_title(metric, unit, better),
        y_title="system and variant",
        x_scale=_scale(values),
        notes=_interval_notes(series),
    )


def _interval_notes(series: list[Series]) -> list[str]:
    kinds = {m.interval for s in series for m in s.marks}
    notes = []
    if "median_ci" in kinds:
        notes.append("Whiskers: the 95% interval of the median.")
    if "range" in kinds:
        notes.append(
            "Dashed whiskers: the lowest and highest sample, where there are too few samples "
            "(fewer than 6) for a 95% interval of the median; an arrowhead at the edge: the "
            "range runs on past the axis (the table has its numbers)."
        )
    if "none" in kinds:
        notes.append("A mark without whiskers is a single sample.")
    return notes


def _lines(
    benchmark: str,
    metric: str,
    unit: str,
    better: str,
    items: list[Item],
    x_param: str,
    ctx: Context,
) -> Figure:
    series = []
    for s, members in _series_groups(items, ctx, x_param):
        s.marks = sorted((_mark(i, x=float(i.params[x_param])) for i in members), key=_x_of)
        series.append((s, members))
    xs = [float(i.params[x_param]) for i in items]
    ys = [i.result.median for i in items]
    references = _references(benchmark, metric, unit, items, ctx)
    curves = _curves([s for s, _m in series], [m for _s, m in series], x_param, ctx)
    notes = _interval_notes([s for s, _m in series])
    if references:
        notes.append(
            "Black horizontal lines, each named at its right end: what the operating system "
            "itself takes for the same metric (the floor, sut os), from this run."
        )
    if curves:
        notes.append(
            f"Thin dashed curves: the model fitted by {benchmark} (benchmark {MODEL_BENCHMARK}): "
            "time per page = slope + c / n."
        )
    return _figure(
        "lines",
        (benchmark, metric, unit, better),
        items,
        [s for s, _m in series],
        x_param,
        title=f"{metric_words(metric).capitalize()} against {x_param.replace('_', ' ')}",
        x_title=_param_words(x_param, ctx),
        y_title=_y_title(metric, unit, better),
        x_scale=_scale(xs),
        y_scale=_scale(ys + [r.value for r in references]),
        references=references,
        curves=curves,
        notes=notes,
    )


def _x_of(mark: Mark) -> float:
    return mark.x if mark.x is not None else 0.0


# The floors are all the operating system's colour: a dash pattern each tells them apart.
REFERENCE_DASHES = ("7 4", "2 3", "10 3 2 3", "4 4 1 4 1 4")


def _references(
    benchmark: str, metric: str, unit: str, items: list[Item], ctx: Context
) -> list[Reference]:
    if any(i.result.sut == FLOOR for i in items):
        return []
    floors = [
        i
        for i in ctx.items
        if i.result.sut == FLOOR
        and i.result.benchmark != benchmark
        and (i.result.metric, i.result.unit) == (metric, unit)
    ]
    style = ctx.systems.style(FLOOR)
    return [
        Reference(
            label=f"{style.title}: {f.result.benchmark}",
            value=f.result.median,
            colour=style.colour,
            dash=REFERENCE_DASHES[k % len(REFERENCE_DASHES)],
            flags=flags_of(f.result),
        )
        for k, f in enumerate(floors)
    ]


def _curves(
    series: list[Series], members: list[list[Item]], x_param: str, ctx: Context
) -> list[Curve]:
    model = [i for i in ctx.items if i.result.benchmark == MODEL_BENCHMARK]
    if not model:
        return []
    curves = []
    for s, items in zip(series, members, strict=True):
        params = {k: v for k, v in items[0].params.items() if k != x_param}
        fitted = [
            i
            for i in model
            if all(params.get(k) == v for k, v in i.params.items()) and i.result.sut == s.system
        ]
        by_metric = {i.result.metric: i.result.median for i in fitted}
        slope_name = next((m for m in MODEL_SLOPES if m in by_metric), None)
        if MODEL_INTERCEPT not in by_metric or slope_name is None:
            continue
        c, slope = by_metric[MODEL_INTERCEPT], by_metric[slope_name]
        lo, hi = min(_x_of(m) for m in s.marks), max(_x_of(m) for m in s.marks)
        if lo <= 0:
            continue
        xs = [lo * (hi / lo) ** (k / (CURVE_POINTS - 1)) for k in range(CURVE_POINTS)]
        curves.append(
            Curve(
                label=f"{s.label}: fitted {slope_name} + c/n",
                colour=s.colour,
                formula=f"{slope_name} = {slope:.4g}, c = {c:.4g} (per page: {slope_name} + c/n)",
                xs=xs,
                ys=[slope + c / x for x in xs],
            )
        )
    return curves


def _percentiles(
    benchmark: str, metric: str, unit: str, better: str, items: list[Item], ctx: Context
) -> Figure:
    series = []
    finest = 0.0
    for s, members in _series_groups(items, ctx, None):
        for item in members[:1]:
            d = distribution(item.result)
            marks = [_mark(item, x=nines(p, d.n), y=v) for p, v in d.percentiles if p < 100]
            finest = max([finest, *(m.x or 0.0 for m in marks)])
            s.marks = marks + [_mark(item, x=math.inf, y=d.percentiles[-1][1])]
        series.append(s)
    at_max = math.floor(finest + 1e-6) + 1.0
    for s in series:
        s.marks[-1].x = at_max
    ticks = [Tick(value=nines(p, 0), label=percentile_label(p)) for p in (50.0, 90.0, 99.0, 99.9)]
    ticks = [t for t in ticks if t.value <= finest + 1e-6] + [Tick(value=at_max, label="max")]
    values = [m.y for s in series for m in s.marks]
    return _figure(
        "percentiles",
        (benchmark, metric, unit, better),
        items,
        series,
        title=f"{metric_words(metric).capitalize()}: percentiles of every sample",
        x_title="percentile (p99: 99% of the samples are at most this; max: the slowest)",
        y_title=f"{metric_words(metric)} ({unit_words(unit)})",
        y_scale=_scale(values),
        x_ticks=ticks,
        notes=[
            "Nearest-rank percentiles of each result's samples (a histogram's buckets above "
            "100,000 samples, within 0.39%); a percentile is drawn only where a result has "
            "enough samples to tell it from the maximum."
        ],
    )


def _top_k(
    benchmark: str, metric: str, unit: str, better: str, items: list[Item], ctx: Context
) -> Figure:
    series = []
    for s, members in _series_groups(items, ctx, None):
        item = members[0]
        top = distribution(item.result).top
        s.marks = [_mark(item, x=float(k + 1), y=v) for k, v in enumerate(top)]
        series.append(s)
    values = [m.y for s in series for m in s.marks]
    return _figure(
        "top_k",
        (benchmark, metric, unit, better),
        items,
        series,
        title=f"{metric_words(metric).capitalize()}: the k-th most expensive (thesis figure 5-3)",
        x_title="k (1: the most expensive sample)",
        y_title=f"{metric_words(metric)} ({unit_words(unit)})",
        x_scale="log",
        y_scale=_scale(values),
    )
