"""Figures with one labelled row per thing: dot plots of systems and forest plots of ratios.

A row is a mark with whiskers (the interval), its label on the left, rows
grouped under a heading (the system, or what a comparison's pairs share).
A forest plot adds the line of no difference at ratio 1 and reads on a log
axis, so that half and double are as far from 1.
"""

from dataclasses import dataclass

from markupsafe import Markup

from xaclab_server.schemas.figure import Figure
from xaclab_server.ui.chart_svg import (
    AXIS,
    GRID,
    TEXT,
    Scale,
    ScaleKind,
    domain,
    el,
    join,
    marker,
    number,
    svg,
    text,
    ticks,
)
from xaclab_server.ui.chart_xy import doubtful, tip

WIDTH = 760.0
ROW = 22.0
TOP, BOTTOM, RIGHT = 10.0, 50.0, 24.0
CHAR = 7.0  # px per character of a 12px label, roughly
MAX_LABEL = 340.0


@dataclass(frozen=True, slots=True)
class RowMark:
    group: str
    label: str
    colour: str
    shape: str
    value: float | None
    low: float | None
    high: float | None
    dashed: bool  # a min–max range, not an interval
    hollow: bool  # a flagged result
    tip: str


def render_rows(
    rows: list[RowMark],
    *,
    x_title: str,
    x_scale: ScaleKind,
    reference: float | None = None,
    label: str,
    max_label: float = MAX_LABEL,
    width: float = WIDTH,
) -> Markup:
    lines: list[tuple[str, RowMark | None]] = []
    headed: set[str] = set()
    for group in dict.fromkeys(r.group for r in rows):
        members = [r for r in rows if r.group == group]
        # A group of one row named as the group needs no heading of its own.
        if len(members) > 1 or members[0].label != group:
            lines.append((group, None))
            headed.add(group)
        lines.extend((group, r) for r in members)
    longest = max(
        [len(r.label) + 2 for _g, r in lines if r] + [len(g) for g, r in lines if r is None] + [8]
    )
    left = min(longest * CHAR + 16, max_label)
    height = TOP + ROW * len(lines) + BOTTOM
    # A min–max range of too few samples runs off the edge rather than set the axis.
    values = [
        v for r in rows for v in (r.value, *(() if r.dashed else (r.low, r.high))) if v is not None
    ]
    if reference is not None:
        values.append(reference)
    low, high = domain(values, x_scale, from_zero=reference is None)
    x = Scale(x_scale, low, high, left, width - RIGHT)
    parts = [_axes(x, left, height, x_title, reference)]
    for index, (group, row) in enumerate(lines):
        middle = TOP + ROW * index + ROW / 2
        if row is None:
            parts.append(text(8, middle + 4, group, font_weight="600", class_="row-group"))
            continue
        parts.append(_row(row, x, left, middle, indented=group in headed))
    return svg(width, height, join(parts), label=label)


def _axes(x: Scale, left: float, height: float, x_title: str, reference: float | None) -> Markup:
    bottom = height - BOTTOM
    parts = []
    for value in ticks(x.low, x.high, x.kind):
        at = x(value)
        parts.append(el("line", x1=f"{at:.1f}", y1=TOP, x2=f"{at:.1f}", y2=bottom, stroke=GRID))
        parts.append(text(at, bottom + 16, number(value), text_anchor="middle", class_="tick"))
    parts.append(
        el(
            "rect",
            x=f"{left:.1f}",
            y=TOP,
            width=f"{x.end - left:.1f}",
            height=f"{bottom - TOP:.1f}",
            fill="none",
            stroke=AXIS,
        )
    )
    if reference is not None:
        at = x(reference)
        parts.append(
            el(
                "line",
                el("title", f"no difference: {number(reference)}"),
                x1=f"{at:.1f}",
                y1=TOP,
                x2=f"{at:.1f}",
                y2=bottom,
                stroke=TEXT,
                stroke_width=1.4,
                class_="reference",
            )
        )
    parts.append(
        text(
            (left + x.end) / 2,
            height - 12,
            x_title,
            text_anchor="middle",
            class_="axis-title x-title",
        )
    )
    return join(parts)


def _row(row: RowMark, x: Scale, left: float, middle: float, *, indented: bool) -> Markup:
    label = (
        row.label
        if len(row.label) * CHAR < left - 24
        else row.label[: int((left - 24) / CHAR) - 1] + "…"
    )
    parts = [
        el(
            "line",
            x1=f"{left:.1f}",
            y1=f"{middle:.1f}",
            x2=f"{x.end:.1f}",
            y2=f"{middle:.1f}",
            stroke="#f0f2f4",
        ),
        text(24 if indented else 8, middle + 4, label, class_="row-label"),
    ]
    if row.low is not None and row.high is not None:
        ends = [min(max(x(v), left), x.end) for v in (row.low, row.high)]
        parts.append(
            el(
                "line",
                x1=f"{ends[0]:.1f}",
                y1=f"{middle:.1f}",
                x2=f"{ends[1]:.1f}",
                y2=f"{middle:.1f}",
                stroke=row.colour,
                stroke_width=1.8,
                stroke_dasharray="3 2" if row.dashed else None,
            )
        )
        for value, end in zip((row.low, row.high), ends, strict=True):
            parts.append(_whisker_end(x(value), end, middle, row.colour, left, x.end))
    if row.value is not None:
        parts.append(marker(row.shape, x(row.value), middle, row.colour, hollow=row.hollow))
    return el(
        "g",
        el("title", row.tip) + join(parts),
        class_="row",
        data_label=row.label,
        data_flagged=str(row.hollow).lower(),
    )


def _whisker_end(
    at: float, end: float, middle: float, colour: str, left: float, right: float
) -> Markup:
    """A whisker's cap; an arrowhead at the axis's edge where a min–max range runs past it
    (the axis is set by medians and intervals, not by one far sample)."""
    if left <= at <= right:
        return el(
            "line",
            x1=f"{end:.1f}",
            y1=f"{middle - 4:.1f}",
            x2=f"{end:.1f}",
            y2=f"{middle + 4:.1f}",
            stroke=colour,
            stroke_width=1.4,
        )
    back = 7.0 if at < left else -7.0
    return el(
        "polyline",
        points=f"{end + back:.1f},{middle - 5:.1f} {end:.1f},{middle:.1f} "
        f"{end + back:.1f},{middle + 5:.1f}",
        fill="none",
        stroke=colour,
        stroke_width=1.8,
        class_="off-axis",
    )


def dot_rows(figure: Figure) -> list[RowMark]:
    """A dot plot's rows: every mark of every series, under its system's name."""
    rows = []
    for series in figure.series:
        words = series.label.removeprefix(series.system_title).removeprefix(" · ")
        for mark in series.marks:
            rows.append(
                RowMark(
                    group=series.system_title,
                    label=words or series.system_title,
                    colour=series.colour,
                    shape=series.marker,
                    value=mark.y,
                    low=mark.low,
                    high=mark.high,
                    dashed=mark.interval == "range",
                    hollow=doubtful(mark),
                    tip=tip(series.label, mark, figure, figure.metric.replace("_", " ")),
                )
            )
    return rows


def render_dots(figure: Figure) -> Markup:
    return render_rows(
        dot_rows(figure),
        x_title=figure.x_title,
        x_scale=figure.x_scale,
        label=f"{figure.title}: {figure.x_title}, one row per system and variant",
    )
