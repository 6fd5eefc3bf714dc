"""What the templates call to draw a figure (schemas/figure.py), and their number format."""

from dataclasses import dataclass

from markupsafe import Markup
from xaclab_contracts.validity import FLAG_LABELS

from xaclab_server.schemas.comparison import ComparisonOut
from xaclab_server.schemas.figure import Figure, Section, SingleValue
from xaclab_server.services.compare_view import ForestView
from xaclab_server.services.suites import profile_rule
from xaclab_server.services.systems import params_words, title_of, unit_words
from xaclab_server.ui.chart_rows import RowMark, render_dots, render_rows
from xaclab_server.ui.chart_spark import sparkline
from xaclab_server.ui.chart_svg import number, swatch
from xaclab_server.ui.chart_xy import render_xy


def draw(figure: Figure) -> Markup:
    if figure.kind == "dots":
        return render_dots(figure)
    return render_xy(figure)


# A pair's label names both systems and their variants: a wider chart, most of it labels.
FOREST_WIDTH, FOREST_LABEL = 1100.0, 700.0


def draw_forest(view: ForestView, comparison: ComparisonOut) -> Markup:
    """The forest plot: one row per pair, its ratio and interval, the line of no difference."""
    rows = []
    for row in view.rows:
        p = row.pair
        interval = f"{num(p.ci_low)}–{num(p.ci_high)}" if p.ci_low is not None else "no interval"
        rows.append(
            RowMark(
                group=row.group,
                label=row.label,
                colour=row.colour,
                shape=row.shape,
                value=p.ratio,
                low=p.ci_low,
                high=p.ci_high,
                dashed=False,
                hollow=row.outcome == "doubt",
                tip=f"{row.label}: ratio {num(p.ratio)} (95% interval {interval}), "
                f"q = {p.q_value:.2g}; {p.verdict}",
            )
        )
    stat = comparison.statistic
    return render_rows(
        rows,
        x_title=f"ratio {stat}({view.b}) / {stat}({view.a}), log scale",
        x_scale="log",
        reference=1.0,
        max_label=FOREST_LABEL,
        width=FOREST_WIDTH,
        label=f"{view.b} against {view.a}: one row per pair, the ratio with its 95% interval",
    )


def duration(seconds: float) -> str:
    """A span of time in words: 45 s, 12 min, 3.5 h, 2.1 days."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def num(value: float | None) -> str:
    return "–" if value is None else number(value)


@dataclass(frozen=True, slots=True)
class SingleRow:
    benchmark: str
    system_title: str
    label: str
    cells: list[SingleValue | None]

    @property
    def flags(self) -> dict[str, str] | None:
        """Every flag of the row's values; None when one of them was not judged."""
        found: dict[str, str] = {}
        for cell in self.cells:
            if cell is None:
                continue
            if cell.flags is None:
                return None
            found.update(cell.flags)
        return found


@dataclass(frozen=True, slots=True)
class SingleTable:
    """Single values, one row per benchmark, system and what sets it apart, one column per
    metric; benchmarks with the same metrics share a table, and what every row shares is
    said once."""

    common: str
    columns: list[SingleValue]  # the first value of each metric: its name, unit and direction
    rows: list[SingleRow]


def _metrics(values: list[SingleValue]) -> tuple[tuple[str, str], ...]:
    return tuple(dict.fromkeys((v.metric, v.unit) for v in values))


def single_tables(sections: list[Section]) -> list[SingleTable]:
    merged: dict[tuple[tuple[str, str], ...], list[SingleValue]] = {}
    for section in sections:
        if section.single_values:
            merged.setdefault(_metrics(section.single_values), []).extend(section.single_values)
    tables = []
    for metrics, values in merged.items():
        keys = sorted({k for v in values for k in v.params})
        shared = {
            k: values[0].params[k]
            for k in keys
            if all(k in v.params and v.params[k] == values[0].params[k] for v in values)
        }
        columns = [next(v for v in values if (v.metric, v.unit) == m) for m in metrics]
        rows: dict[tuple[str, str, str], dict[tuple[str, str], SingleValue]] = {}
        for v in values:
            label = params_words({k: p for k, p in v.params.items() if k not in shared})
            rows.setdefault((v.benchmark, v.system_title, label), {})[v.metric, v.unit] = v
        tables.append(
            SingleTable(
                common=params_words(shared),
                columns=columns,
                rows=[
                    SingleRow(benchmark, system, label, [cells.get(m) for m in metrics])
                    for (benchmark, system, label), cells in rows.items()
                ],
            )
        )
    return tables


TEMPLATE_GLOBALS = {
    "draw": draw,
    "draw_forest": draw_forest,
    "sparkline": sparkline,
    "num": num,
    "duration": duration,
    "swatch": swatch,
    "flag_labels": FLAG_LABELS,
    "single_tables": single_tables,
    "params_words": params_words,
    "profile_rule": profile_rule,
    "title_of": title_of,
    "unit_words": unit_words,
}
