"""The reproduction report as a document: JSON, Markdown, or standalone HTML.

All three carry what the page shows (:mod:`.reproduction`).  The HTML
document has its stylesheet inline and loads nothing, so it can be mailed
or archived; the page and the document share their table markup
(``templates/_reproduction_tables.html``).
"""

import re
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from pydantic import TypeAdapter
from xaclab_contracts.validity import FLAG_LABELS

from xaclab_server.core.paths import PACKAGE_DIR
from xaclab_server.services.pairs import NOT_JUDGED_FLAG
from xaclab_server.services.reproduction import (
    LabValue,
    Report,
    ReportRow,
    ReportTable,
    ThesisCell,
)
from xaclab_server.services.reproduction_lookup import CANNOT_MEASURE, NOT_MEASURED

_ADAPTER = TypeAdapter(Report)
_ENV = Environment(
    loader=FileSystemLoader(PACKAGE_DIR / "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
DASH = "–"


# ---- numbers as text, shared by the page and every format ----------------------------------


def number(value: float | None) -> str:
    """A value to four significant digits, thousands grouped: 10,739 / 36.67 / 7.05 / 0.5."""
    if value is None:
        return DASH
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def as_printed(value: float) -> str:
    """A thesis number as the thesis printed it (trailing zeros were not transcribed)."""
    return f"{value:,g}"


def comparison(cell: ThesisCell) -> str:
    """How this lab's value stands to the thesis's: a ratio, or points for percentages."""
    if cell.ratio is not None:
        return f"lab/thesis {cell.ratio:.2f}"
    if cell.difference is not None:
        return f"lab {cell.difference:+.1f} pts"
    return ""


def printed(cell: ThesisCell, row: ReportRow) -> str:
    """The thesis's number as printed, when the row shows it in another unit."""
    if cell.printed is None or row.thesis_unit == row.unit:
        return ""
    return f"{as_printed(cell.printed)} {row.thesis_unit}"


def identity_text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return DASH if value is None else str(value)


def lab_detail(row: ReportRow) -> str:
    """Where a lab value comes from, or why there is none."""
    if row.lab is None:
        reason = row.missing.removeprefix(NOT_MEASURED).removeprefix(CANNOT_MEASURE)
        return reason.lstrip(": ") or row.missing
    runs = ", ".join(str(r) for r in row.lab.run_ids)
    parts = [f"run {runs}" if len(row.lab.run_ids) == 1 else f"runs {runs}"]
    if row.lab.n is not None:
        parts.append(f"n = {row.lab.n}")
    if row.lab.median_ci_percent is not None:
        parts.append(f"median ±{row.lab.median_ci_percent:.1f}% (95%)")
    if row.lab.in_thesis_unit is not None:
        parts.append(f"{number(row.lab.in_thesis_unit)} {row.thesis_unit} on this clock")
    return ", ".join(parts)


def flag_label(name: str) -> str:
    if name == NOT_JUDGED_FLAG:
        return "not judged"
    return FLAG_LABELS.get(name, name.replace("_", " "))


def flags_text(lab: LabValue | None) -> str:
    """The validity flags of a lab value, in words; '' when it has none."""
    if lab is None or not lab.flags:
        return ""
    return "flags: " + ", ".join(flag_label(name) for name in lab.flags)


def kernel_only_text(row: ReportRow) -> str:
    """A kernel-only write-cache result, under its own label and never as the row's value."""
    other = row.kernel_only
    if other is None:
        return ""
    runs = ", ".join(str(r) for r in other.run_ids)
    flags = flags_text(other)
    return (
        f"{row.kernel_only_label}: {number(other.value)} {row.unit} (run {runs}); not the "
        "thesis's write-cache setting, which changed the drives' own caches"
        + (f"; {flags}" if flags else "")
    )


def params_text(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={identity_text(v).lower()}" for k, v in params.items())


HELPERS = {
    "num": number,
    "comparison": comparison,
    "printed": printed,
    "identity_text": identity_text,
    "lab_detail": lab_detail,
    "params_text": params_text,
    "flag_label": flag_label,
    "kernel_only_text": kernel_only_text,
}


# ---- the formats -------------------------------------------------------------------------


def report_json(report: Report) -> bytes:
    return _ADAPTER.dump_json(report)


def report_html(report: Report) -> str:
    return _ENV.get_template("reproduction_export.html").render(report=report, **HELPERS)


def report_markdown(report: Report) -> str:
    machine = report.machine
    lines = [
        f"# Thesis reproduction: {_md(machine.name)}",
        "",
        f"- **This lab's machine:** {_md(machine.name)} (id {machine.id}): "
        f"{_md(machine.description)}; fingerprint `{machine.fingerprint_hash}`, epoch "
        f"{machine.epoch} (only results of this epoch are used)",
        f"- **Thesis:** {_md(report.thesis)}",
        f"- **Generated:** {report.generated_at.isoformat(timespec='seconds')} from the newest "
        f"results of this machine; {report.measured} of {report.total} rows have a lab value"
        + (
            f"; {report.unavailable} cannot have one on this machine, and each says why."
            if report.unavailable
            else "."
        ),
        "- **Units:** both sides in the thesis's unit; cycle counts as times (the thesis's "
        "through its machine's clock rate). lab/thesis is the ratio of the two; percentages "
        "show the difference in points.",
        "",
        "Thesis machines:",
        "",
    ]
    for m in report.thesis_machines:
        lines.append(f"- **{_md(m.name)}** ({m.clock_ghz:g} GHz): {_md(m.description)}")
    for table in report.tables:
        lines.extend(["", *_markdown_table(report, table)])
    return "\n".join(lines) + "\n"


def _markdown_table(report: Report, table: ReportTable) -> list[str]:
    header = [
        *table.identity_columns,
        "measure",
        "unit",
        f"this lab ({report.machine.name})",
        *(f"thesis machine {m}" for m in table.machines),
    ]
    lines = [
        f"## Table {table.table}: {_md(table.title)}",
        "",
        f"{table.measured} of {len(table.rows)} rows measured"
        + (f"; {table.unavailable} cannot be measured on this machine" if table.unavailable else "")
        + f". Source: {_md(table.source)}.",
        "",
        "| " + " | ".join(_md(h) for h in header) + " |",
        "|" + "---|" * len(header),
    ]
    for row in table.rows:
        measure = (
            row.label
            + f" ({row.source}"
            + (f"; {params_text(row.params)}" if row.params else "")
            + ")"
        )
        lab = (
            number(row.lab.value)
            if row.lab
            else "**cannot be measured here**"
            if row.status == "unavailable"
            else "**not measured yet**"
        )
        notes = "; ".join(
            n for n in (lab_detail(row), flags_text(row.lab), kernel_only_text(row)) if n
        )
        cells = [
            *(_md(identity_text(row.identity.get(c))) for c in table.identity_columns),
            _md(measure),
            _md(row.unit),
            f"{lab} ({_md(notes)})",
        ]
        for cell in row.thesis:
            extra = "; ".join(x for x in (printed(cell, row), comparison(cell)) if x)
            cells.append(_md(number(cell.value) + (f" ({extra})" if extra else "")))
        lines.append("| " + " | ".join(cells) + " |")
    if table.unmapped:
        lines.extend(["", f"Columns with no xaclab measurement: {_md(', '.join(table.unmapped))}."])
    if table.caveats:
        lines.extend(["", "Caveats:", ""])
        lines.extend(f"- {_md(c)}" for c in table.caveats)
    return lines


def _md(text: str) -> str:
    """Text that Markdown shows as written (no links, emphasis or HTML from stored names)."""
    return re.sub(r"([\\`*\[\]<>|&])", r"\\\1", text.replace("\n", " "))
