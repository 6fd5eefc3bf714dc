"""A small trend: a series' medians over its last runs, as a line the size of a word."""

from markupsafe import Markup

from xaclab_server.ui.chart_svg import el, number

WIDTH, HEIGHT, PAD = 120.0, 26.0, 3.0


def sparkline(values: list[float], colour: str, unit: str) -> Markup:
    """Oldest to newest, the newest a dot; its ``<title>`` lists the values."""
    if not values:
        return Markup("")
    low, high = min(values), max(values)
    span = high - low or 1.0
    step = (WIDTH - 2 * PAD) / max(len(values) - 1, 1)
    points = [
        (PAD + i * step, HEIGHT - PAD - (v - low) / span * (HEIGHT - 2 * PAD))
        for i, v in enumerate(values)
    ]
    if len(values) == 1:
        points = [(WIDTH / 2, HEIGHT / 2)]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    said = ", ".join(number(v) for v in values)
    what = (
        f"the last {len(values)} runs, oldest first: {said} {unit}"
        if len(values) > 1
        else f"one run so far: {said} {unit}"
    )
    x, y = points[-1]
    body = (
        el("title", what)
        + el("polyline", points=line, fill="none", stroke=colour, stroke_width=1.5)
        + el("circle", cx=f"{x:.1f}", cy=f"{y:.1f}", r=2.5, fill=colour)
    )
    return el(
        "svg",
        body,
        width=WIDTH,
        height=HEIGHT,
        viewBox=f"0 0 {WIDTH:.0f} {HEIGHT:.0f}",
        role="img",
        aria_label=f"trend: {what}",
        class_="sparkline",
    )
