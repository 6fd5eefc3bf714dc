"""Figures with a numeric x axis: lines against a parameter, percentiles, the k-th most expensive.

Each series is a line in its system's colour through marks in its variant's
shape, with whiskers for the interval of each median (dashed for a min–max
range of too few samples); flagged results are hollow marks.  Reference
lines (the operating system's floor) are black and dashed, fitted models
thin dashed curves in their series' colour.
"""

from markupsafe import Markup

from xaclab_server.schemas.figure import Figure, Mark, Series
from xaclab_server.services.systems import unit_words
from xaclab_server.ui.chart_svg import (
    AXIS,
    GRID,
    Scale,
    domain,
    el,
    join,
    marker,
    number,
    svg,
    text,
    ticks,
)

WIDTH, HEIGHT = 760.0, 380.0
LEFT, RIGHT, TOP, BOTTOM = 78.0, 24.0, 14.0, 52.0
MAX_X_TICKS = 12
TOP_K_MARKS = (1, 10, 100, 1000)
LABEL_HEIGHT = 11.0  # a reference line's label, in pixels


def doubtful(mark: Mark) -> bool:
    return mark.flags is None or bool(mark.flags)


def tip(series_label: str, mark: Mark, figure: Figure, x_text: str) -> str:
    parts = [f"{series_label}, {x_text}: {number(mark.y)} {figure.unit}"]
    if mark.low is not None and mark.high is not None:
        what = "95% interval of the median" if mark.interval == "median_ci" else "range"
        parts.append(f"{what} {number(mark.low)}–{number(mark.high)}")
    if mark.n:
        parts.append(f"{mark.n} samples")
    if mark.flags is None:
        parts.append("not judged")
    elif mark.flags:
        parts.append("flags: " + "; ".join(mark.flags.values()))
    return "; ".join(parts)


def _x_ticks(figure: Figure, xs: list[float], scale: Scale) -> list[tuple[float, str]]:
    if figure.x_ticks:
        return [(t.value, t.label) for t in figure.x_ticks]
    distinct = sorted(set(xs))
    if figure.kind == "lines" and len(distinct) <= MAX_X_TICKS:
        return [(x, number(x)) for x in distinct]
    return [(t, number(t)) for t in ticks(scale.low, scale.high, scale.kind)]


def _x_text(figure: Figure, mark: Mark) -> str:
    if figure.kind == "percentiles":
        for t in figure.x_ticks:
            if mark.x is not None and abs(t.value - mark.x) < 1e-9:
                return t.label
    if figure.kind == "top_k":
        return f"k = {number(mark.x or 0)}"
    return f"{figure.x_title.split(':')[0]} = {number(mark.x or 0)}"


def render_xy(figure: Figure) -> Markup:
    xs = [m.x for s in figure.series for m in s.marks if m.x is not None]
    xs += [x for c in figure.curves for x in c.xs]
    # The axis shows the medians, their intervals and the references; a min–max range of
    # too few samples (one outlier can be 50 times the median) runs off the edge instead.
    ys = [m.y for s in figure.series for m in s.marks]
    ys += [
        v
        for s in figure.series
        for m in s.marks
        if m.interval == "median_ci"
        for v in (m.low, m.high)
        if v is not None
    ]
    ys += [r.value for r in figure.references]
    x_low, x_high = domain(xs, figure.x_scale, from_zero=False)
    y_low, y_high = domain(ys, figure.y_scale, from_zero=figure.kind == "lines")
    x = Scale(figure.x_scale, x_low, x_high, LEFT, WIDTH - RIGHT)
    y = Scale(figure.y_scale, y_low, y_high, HEIGHT - BOTTOM, TOP)
    clip = f"{figure.id}-plot"
    parts: list[Markup] = [
        el(
            "clipPath",
            el("rect", x=LEFT, y=TOP, width=WIDTH - LEFT - RIGHT, height=HEIGHT - TOP - BOTTOM),
            id=clip,
        ),
        _grid(figure, xs, x, y),
    ]
    lines, names = _references(figure, y)
    plotted: list[Markup] = [lines]
    for curve in figure.curves:
        points = " ".join(
            f"{x(cx):.1f},{y(cy):.1f}"
            for cx, cy in zip(curve.xs, curve.ys, strict=True)
            if cy > 0 or figure.y_scale == "linear"
        )
        plotted.append(
            el(
                "polyline",
                el("title", f"{curve.label}: {curve.formula}"),
                points=points,
                fill="none",
                stroke=curve.colour,
                stroke_width=1,
                stroke_dasharray="2 2",
                stroke_opacity=0.8,
                class_="curve",
            )
        )
    for series in figure.series:
        plotted.append(_series(figure, series, x, y))
    plotted.append(names)  # on top, so no series hides a floor's name
    parts.append(el("g", join(plotted), clip_path=f"url(#{clip})"))
    return svg(
        WIDTH,
        HEIGHT,
        join(parts),
        label=f"{figure.title}: {figure.y_title} against {figure.x_title}",
    )


def _references(figure: Figure, y: Scale) -> tuple[Markup, Markup]:
    """The reference lines, and each one's name and value written at its right end, above
    the line (below it when the line above took that place), so no legend is needed to
    tell the floors apart."""
    lines, names = [], []
    taken: float | None = None
    for reference in sorted(figure.references, key=lambda r: y(r.value)):
        at = y(reference.value)
        words = f"{reference.label}: {number(reference.value)} {unit_words(figure.unit)}"
        above = at - 6
        label_y = above if taken is None or above - taken > LABEL_HEIGHT else at + LABEL_HEIGHT + 3
        taken = label_y
        line = el(
            "line",
            el("title", words),
            x1=LEFT,
            y1=f"{at:.1f}",
            x2=WIDTH - RIGHT,
            y2=f"{at:.1f}",
            stroke=reference.colour,
            stroke_width=1.4,
            stroke_dasharray=reference.dash,
        )
        name = text(
            WIDTH - RIGHT - 6,
            label_y,
            words,
            text_anchor="end",
            font_size=11,
            stroke="#ffffff",
            stroke_width=3,
            paint_order="stroke",
            class_="reference-label",
        )
        lines.append(el("g", line, class_="reference"))
        names.append(name)
    return join(lines), join(names)


def _grid(figure: Figure, xs: list[float], x: Scale, y: Scale) -> Markup:
    parts = []
    for value, label in _x_ticks(figure, xs, x):
        at = x(value)
        parts.append(
            el("line", x1=f"{at:.1f}", y1=TOP, x2=f"{at:.1f}", y2=HEIGHT - BOTTOM, stroke=GRID)
        )
        parts.append(text(at, HEIGHT - BOTTOM + 16, label, text_anchor="middle", class_="tick"))
    for value in ticks(y.low, y.high, y.kind):
        at = y(value)
        parts.append(
            el("line", x1=LEFT, y1=f"{at:.1f}", x2=WIDTH - RIGHT, y2=f"{at:.1f}", stroke=GRID)
        )
        parts.append(text(LEFT - 6, at + 4, number(value), text_anchor="end", class_="tick"))
    parts.append(
        el(
            "rect",
            x=LEFT,
            y=TOP,
            width=WIDTH - LEFT - RIGHT,
            height=HEIGHT - TOP - BOTTOM,
            fill="none",
            stroke=AXIS,
        )
    )
    parts.append(
        text(
            (LEFT + WIDTH - RIGHT) / 2,
            HEIGHT - 10,
            figure.x_title,
            text_anchor="middle",
            class_="axis-title x-title",
        )
    )
    middle = (TOP + HEIGHT - BOTTOM) / 2
    parts.append(
        text(
            16,
            middle,
            figure.y_title,
            text_anchor="middle",
            transform=f"rotate(-90 16 {middle:.1f})",
            class_="axis-title y-title",
        )
    )
    return join(parts)


def _series(figure: Figure, series: Series, x: Scale, y: Scale) -> Markup:
    marks = [m for m in series.marks if m.x is not None and (figure.y_scale == "linear" or m.y > 0)]
    points = " ".join(f"{x(m.x or 0):.1f},{y(m.y):.1f}" for m in marks)
    parts = [
        el(
            "polyline",
            points=points,
            fill="none",
            stroke=series.colour,
            stroke_width=2,
            stroke_dasharray=series.dash or None,
        )
    ]
    for m in marks:
        if figure.kind == "top_k" and (m.x or 0) not in TOP_K_MARKS:
            continue
        cx, cy = x(m.x or 0), y(m.y)
        whisker = Markup("")
        if m.low is not None and m.high is not None:
            whisker = el(
                "line",
                x1=f"{cx:.1f}",
                y1=f"{y(m.low):.1f}",
                x2=f"{cx:.1f}",
                y2=f"{y(m.high):.1f}",
                stroke=series.colour,
                stroke_width=1.4,
                stroke_dasharray="3 2" if m.interval == "range" else None,
            )
        title = el("title", tip(series.label, m, figure, _x_text(figure, m)))
        shape = marker(series.marker, cx, cy, series.colour, hollow=doubtful(m))
        parts.append(
            el("g", title + whisker + shape, class_="mark", data_flagged=str(doubtful(m)).lower())
        )
    return el("g", join(parts), class_="series", data_series=series.label)
