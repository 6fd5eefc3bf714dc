"""The pieces every chart of the pages is drawn with: scales, ticks, numbers, SVG elements.

Charts are drawn on the server as inline SVG, so they show without scripts,
carry their words (axis titles, labels, each mark's numbers in a ``<title>``
tooltip) in the page's DOM, and need no library.  Everything a user or an
agent could have written (names, params) is escaped here, in :func:`el`.
"""

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from markupsafe import Markup, escape

ScaleKind = Literal["linear", "log"]
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif"
GRID = "#d9dee2"
AXIS = "#5f6b73"
TEXT = "#1d2327"


def el(tag: str, content: str | Markup = "", /, **attrs: object) -> Markup:
    """An SVG element; ``class_`` is ``class``, ``_`` in other names is ``-``."""
    parts = []
    for name, value in attrs.items():
        if value is None:
            continue
        key = "class" if name == "class_" else name.rstrip("_").replace("_", "-")
        parts.append(f' {key}="{escape(str(value))}"')
    body = content if isinstance(content, Markup) else escape(content)
    return Markup(f"<{tag}{''.join(parts)}>{body}</{tag}>")


def join(parts: Iterable[Markup]) -> Markup:
    return Markup("").join(parts)


def number(value: float, digits: int = 4) -> str:
    """A number as a table shows it: 4 significant digits, thousands grouped, no exponent
    between 0.001 and 10^9."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    magnitude = math.floor(math.log10(abs(value)))
    if magnitude >= 9 or magnitude < -3:
        return f"{value:.{digits - 1}e}"
    decimals = max(digits - 1 - magnitude, 0)
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


@dataclass(frozen=True, slots=True)
class Scale:
    kind: ScaleKind
    low: float
    high: float
    start: float  # pixels
    end: float

    def __call__(self, value: float) -> float:
        if self.kind == "log":
            value = max(value, self.low)
            span = math.log10(self.high) - math.log10(self.low)
            share = (math.log10(value) - math.log10(self.low)) / span if span else 0.5
        else:
            span = self.high - self.low
            share = (value - self.low) / span if span else 0.5
        return self.start + share * (self.end - self.start)


def domain(values: list[float], kind: ScaleKind, *, from_zero: bool) -> tuple[float, float]:
    """The range an axis shows: every value, a margin, and zero for a linear axis of
    non-negative values when ``from_zero`` (a length that starts elsewhere misleads)."""
    finite = [v for v in values if math.isfinite(v) and (kind == "linear" or v > 0)]
    if not finite:
        return (0.0, 1.0) if kind == "linear" else (1.0, 10.0)
    low, high = min(finite), max(finite)
    if kind == "log":
        if low == high:
            return low / 2, high * 2
        ratio = (high / low) ** 0.05
        return low / ratio, high * ratio
    if from_zero and low >= 0:
        low = 0.0
    if low == high:
        return (low - 1, high + 1) if low else (0.0, 1.0)
    pad = (high - low) * 0.05
    return (low if from_zero and low == 0 else low - pad), high + pad


def ticks(low: float, high: float, kind: ScaleKind, *, count: int = 6) -> list[float]:
    if kind == "log":
        first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
        decades = [10.0**e for e in range(first, last + 1)]
        shown = [t for t in decades if low <= t <= high]
        if len(shown) < 4:
            shown = [d * m for d in decades for m in (1, 2, 5) if low <= d * m <= high]
        if len(shown) < 3:
            # A narrow range (a forest plot's ratios of 0.95 to 1.05): evenly spaced values read
            # better than one lone "1", and on so short a stretch a log axis is nearly linear.
            shown = [t for t in ticks(low, high, "linear", count=count) if t > 0]
        return shown
    raw = (high - low) / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    start = math.ceil(low / step) * step
    out = []
    value = start
    while value <= high + step * 1e-9:
        out.append(0.0 if abs(value) < step * 1e-9 else value)
        value += step
    return out


def marker(
    shape: str, x: float, y: float, colour: str, *, hollow: bool, size: float = 4.5
) -> Markup:
    """A mark: filled for a sound result, hollow (white inside) for a flagged one."""
    fill = "#ffffff" if hollow else colour
    common = {"fill": fill, "stroke": colour, "stroke_width": 1.6}
    s = size
    if shape == "square":
        return el(
            "rect",
            x=f"{x - s:.1f}",
            y=f"{y - s:.1f}",
            width=f"{2 * s:.1f}",
            height=f"{2 * s:.1f}",
            **common,
        )
    if shape == "triangle":
        corners = [(0, -1.2), (1.1, 0.9), (-1.1, 0.9)]
        return el("polygon", points=_points(x, y, s, corners), **common)
    if shape == "diamond":
        corners = [(0, -1.3), (1.3, 0), (0, 1.3), (-1.3, 0)]
        return el("polygon", points=_points(x, y, s, corners), **common)
    if shape == "cross":
        a, b = _points(x, y, s, [(-1, -1), (1, 1)]), _points(x, y, s, [(-1, 1), (1, -1)])
        d = f"M{a.replace(' ', 'L')}M{b.replace(' ', 'L')}"
        return el("path", d=d, stroke=colour, stroke_width=2.2, fill="none")
    if shape == "star":
        points = " ".join(
            f"{x + (s * 1.4 if k % 2 == 0 else s * 0.6) * math.sin(k * math.pi / 5):.1f},"
            f"{y - (s * 1.4 if k % 2 == 0 else s * 0.6) * math.cos(k * math.pi / 5):.1f}"
            for k in range(10)
        )
        return el("polygon", points=points, **common)
    return el("circle", cx=f"{x:.1f}", cy=f"{y:.1f}", r=f"{s:.1f}", **common)


def _points(x: float, y: float, size: float, corners: list[tuple[float, float]]) -> str:
    return " ".join(f"{x + dx * size:.1f},{y + dy * size:.1f}" for dx, dy in corners)


def swatch(shape: str, colour: str, *, hollow: bool = False, dash: str | None = None) -> Markup:
    """A legend's sample of a series: its marker on a short line (or the line alone)."""
    line = el("line", x1=1, y1=8, x2=27, y2=8, stroke=colour, stroke_width=2, stroke_dasharray=dash)
    mark = marker(shape, 14, 8, colour, hollow=hollow) if shape else Markup("")
    return el(
        "svg",
        line + mark,
        width=28,
        height=16,
        viewBox="0 0 28 16",
        aria_hidden="true",
        class_="swatch",
    )


def text(x: float, y: float, content: str, **attrs: object) -> Markup:
    return el("text", content, x=f"{x:.1f}", y=f"{y:.1f}", fill=TEXT, **attrs)


def svg(width: float, height: float, body: Markup, *, label: str) -> Markup:
    """The chart: scales with its box, named for screen readers."""
    return el(
        "svg",
        body,
        xmlns="http://www.w3.org/2000/svg",
        viewBox=f"0 0 {width:.0f} {height:.0f}",
        role="img",
        aria_label=label,
        class_="figure-svg",
        font_family=FONT,
        font_size=12,
    )
