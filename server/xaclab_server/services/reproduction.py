"""The thesis-reproduction report: the thesis's tables beside one lab machine's results.

For each table of :data:`REPORT_TABLES` (contracts/thesis-figures.json), one
:class:`ReportRow` per measurement: the thesis's value on each of its
machines, this machine's value in the same unit, and their ratio.  A row
is grouped by the thesis row's identity (advisory, test, search tree ...),
its column and its mapping, so a column mapped differently on different
thesis machines (table C.11's Berkeley DB) gives one row per mapping.

A lab value is one statistic of the newest result of this machine's current
epoch that matches the mapping (:mod:`.reproduction_lookup`), with that
result's validity flags.  Derived rows compute their formula from those
values and carry every operand's flags.  A row with no value says "not
measured yet" and why, or, when this machine cannot give it one (a disk whose
write cache only the kernel's view of could be switched), "cannot be measured
on this machine" and why; a row that wants the device's write cache on or off
shows a kernel-only result (``kernel-off``: the kernel stopped sending flushes,
the device's cache did not change) beside it under its own label, never as
its value.

Units (:mod:`.units`): both sides are shown in the thesis's unit, except
that cycle counts are shown as times, the thesis's through its machine's
clock rate (Table 4.1); the lab value is also given in cycles when the
machine's fingerprint names its clock (``cpu.max_freq_mhz``).
"""

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from sqlalchemy.orm import Session
from xaclab_contracts import files
from xaclab_contracts.precision import half_width_percent
from xaclab_contracts.validity import WRITE_CACHE_LABELS

from xaclab_server.models import Machine
from xaclab_server.services.pairs import NOT_JUDGED_FLAG
from xaclab_server.services.reproduction_lookup import (
    CANNOT_MEASURE,
    NOT_MEASURED,
    Found,
    Lookup,
    find_latest,
    is_number,
)
from xaclab_server.services.reproduction_machine import LabMachine, lab_machine
from xaclab_server.services.thesis_figures import (
    Cell,
    Derived,
    Mapping,
    ParamValue,
    ThesisFigures,
    ThesisFiguresError,
    ThesisMachine,
    ThesisTable,
    load_thesis_figures,
)
from xaclab_server.services.units import (
    UnitError,
    convert,
    cycles_to_time,
    is_cycles,
    is_time,
    time_to_cycles,
)
from xaclab_server.services.validity import NOT_JUDGED

REPORT_TABLES = (
    "4.2",
    "4.3",
    "4.5",
    "4.6",
    "4.7",
    "4.8",
    "4.9",
    "C.9",
    "4.10",
    "C.10",
    "5.5",
    "5.6",
    "C.8",
    "C.11",
    "C.12",
)
MAX_ID = 2**31 - 1  # ids are PostgreSQL integers
THESIS_FIGURES = files.THESIS_FIGURES
# "unavailable": this machine cannot give the row a value, and ``missing`` says why.
Status = Literal["measured", "derived", "missing", "unavailable"]


@dataclass(frozen=True, slots=True)
class LabValue:
    value: float
    source_value: float
    source_unit: str
    statistic: str
    n: int | None
    result_ids: list[int]
    run_ids: list[int]
    measured_at: datetime | None
    in_thesis_unit: float | None = None
    # Validity flags of the results it comes from (docs/validity.md); "not_judged" for
    # results stored before flags existed.
    flags: dict[str, str] = field(default_factory=dict)
    # Half-width of the 95% interval of the result's median, percent (None: too few samples).
    median_ci_percent: float | None = None


@dataclass(frozen=True, slots=True)
class ThesisCell:
    machine: str
    printed: float | None
    value: float | None
    ratio: float | None
    difference: float | None


@dataclass(slots=True)
class ReportRow:
    identity: dict[str, Any]
    column: str
    label: str
    unit: str
    thesis_unit: str
    source: str
    params: dict[str, ParamValue]
    status: Status
    lab: LabValue | None
    missing: str
    thesis: list[ThesisCell]
    # A result with the kernel's view of the write cache instead of the device's one the row
    # asks for: shown beside the row under its own label, never as its value.
    kernel_only: LabValue | None = None
    kernel_only_label: str = ""


@dataclass(slots=True)
class ReportTable:
    table: str
    title: str
    source: str
    machines: list[str]
    identity_columns: list[str]
    rows: list[ReportRow]
    caveats: list[str]
    unmapped: list[str]
    measured: int = 0
    unavailable: int = 0


@dataclass(frozen=True, slots=True)
class ThesisMachineOut:
    name: str
    description: str
    clock_ghz: float


@dataclass(slots=True)
class Report:
    machine: LabMachine
    generated_at: datetime
    thesis: str
    thesis_machines: list[ThesisMachineOut]
    tables: list[ReportTable]
    measured: int = 0
    total: int = 0
    unavailable: int = 0


@dataclass(slots=True)
class _Spec:
    identity: tuple[tuple[str, Any], ...]
    column: str
    label: str
    cell: Cell
    thesis_unit: str
    thesis: dict[str, Any] = field(default_factory=dict)


# ---- the report -----------------------------------------------------------------------------


def build_report(
    *, session: Session, figures: ThesisFigures, machine: Machine, now: datetime
) -> Report:
    lab = lab_machine(machine)
    plans = {name: _plan(table) for name, table in figures.tables.items()}
    wanted: list[Mapping] = []
    for name, specs in plans.items():
        wanted.extend(s.cell for s in specs if isinstance(s.cell, Mapping))
        wanted.extend(figures.tables[name].refs.values())
    lookup = find_latest(
        session=session, machine_id=machine.id, epoch=machine.epoch, mappings=wanted
    )
    tables = [
        _table(figures.tables[name], specs, lookup, figures.machines, lab.clock_ghz)
        for name, specs in plans.items()
    ]
    report = Report(
        machine=lab,
        generated_at=now,
        thesis=figures.thesis,
        thesis_machines=[
            ThesisMachineOut(m.name, m.description, m.clock_ghz) for m in figures.machines.values()
        ],
        tables=tables,
    )
    report.measured = sum(t.measured for t in tables)
    report.total = sum(len(t.rows) for t in tables)
    report.unavailable = sum(t.unavailable for t in tables)
    return report


def machine_report(
    *, session: Session, figures: ThesisFigures, machine_id: int, now: datetime
) -> Report | None:
    """The report of machine ``machine_id``, or None if there is no such machine."""
    machine = session.get(Machine, machine_id) if 1 <= machine_id <= MAX_ID else None
    if machine is None:
        return None
    return build_report(session=session, figures=figures, machine=machine, now=now)


def _plan(table: ThesisTable) -> list[_Spec]:
    """The report's rows of ``table`` (without values), in reading order."""
    specs: dict[tuple[Any, ...], _Spec] = {}
    identities: list[tuple[tuple[str, Any], ...]] = []
    for row in table.rows:
        if row.identity not in identities:
            identities.append(row.identity)
        for column, cell in row.cells.items():
            key = (row.identity, column, _cell_key(cell))
            spec = specs.get(key)
            if spec is None:
                spec = specs[key] = _Spec(
                    identity=row.identity,
                    column=column,
                    label=table.labels.get(column, column.replace("_", " ")),
                    cell=cell,
                    thesis_unit=table.units[column],
                )
            spec.thesis[row.machine] = row.values.get(column)
        for model in table.model:
            extra = {p: dict(row.identity)[p] for p in model.params_from_row}
            mapping = model.mapping.with_params(extra)
            key = (row.identity, model.name, _cell_key(mapping))
            spec = specs.get(key)
            if spec is None:
                spec = specs[key] = _Spec(
                    identity=row.identity,
                    column=model.name,
                    label=model.label,
                    cell=mapping,
                    thesis_unit=table.units[model.compare_with],
                )
            spec.thesis[row.machine] = row.values.get(model.compare_with)
    order = {c: i for i, c in enumerate(table.value_columns)}
    model_order = {m.name: len(order) + i for i, m in enumerate(table.model)}
    appearance = {key: i for i, key in enumerate(specs)}
    return [
        specs[key]
        for key in sorted(
            specs,
            key=lambda k: (
                identities.index(k[0]),
                order.get(k[1], model_order.get(k[1], len(order))),
                appearance[k],
            ),
        )
    ]


def _cell_key(cell: Cell) -> str:
    if isinstance(cell, Derived):
        return json.dumps(["derived", cell.formula.text, cell.unit, cell.operand_unit])
    return json.dumps(
        [cell.suite, cell.benchmark, cell.sut, cell.metric, cell.statistic, cell.params]
    )


def load_report_figures(path: Path = THESIS_FIGURES) -> ThesisFigures:
    """The report's tables, checked so that every row's units convert (or ThesisFiguresError)."""
    figures = load_thesis_figures(path, REPORT_TABLES)
    for table in figures.tables.values():
        for spec in _plan(table):
            unit = row_unit(spec.thesis_unit, spec.cell)
            try:
                if is_cycles(spec.thesis_unit) and not is_time(unit):
                    raise UnitError(f"cycles are shown as a time, not in {unit}")
                if not is_cycles(spec.thesis_unit):
                    convert(1.0, spec.thesis_unit, unit)
                convert(1.0, spec.cell.unit, unit)
                if isinstance(spec.cell, Derived) and spec.cell.operand_unit:
                    for name in spec.cell.formula.names & set(table.refs):
                        convert(1.0, table.refs[name].unit, spec.cell.operand_unit)
            except UnitError as exc:
                raise ThesisFiguresError(f"table {table.table}, {spec.column}: {exc}") from None
    return figures


def row_unit(thesis_unit: str, cell: Cell) -> str:
    """The unit a row shows both sides in: the thesis's, or a time for cycle counts."""
    return cell.unit if is_cycles(thesis_unit) else thesis_unit


def _table(
    table: ThesisTable,
    specs: list[_Spec],
    lookup: Lookup,
    machines: dict[str, ThesisMachine],
    lab_clock: float | None,
) -> ReportTable:
    found = lookup.found
    rows: list[ReportRow] = []
    siblings: dict[tuple[Any, ...], ReportRow] = {}
    for spec in specs:
        unit = row_unit(spec.thesis_unit, spec.cell)
        kernel_only = None
        if isinstance(spec.cell, Mapping):
            lab, missing = _measured(spec.cell, found, lookup.why, unit)
            other = lookup.kernel_only.get(spec.cell)
            if other is not None:
                kernel_only, _ = _measured(spec.cell, {spec.cell: other}, {}, unit)
            status: Status = "measured" if lab else "missing"
            if lab is None and spec.cell in lookup.unavailable:
                status, missing = "unavailable", lookup.unavailable[spec.cell]
            source, params = _describe(spec.cell), spec.cell.params_dict
        else:
            lab, missing = _derive(spec, table, siblings, found, unit)
            status = "derived" if lab else "missing"
            cannot = [] if lab else _unavailable_operands(spec, table, siblings, lookup)
            if cannot:
                status = "unavailable"
                missing = (
                    f"{CANNOT_MEASURE}: needs {', '.join(cannot)}, which this machine "
                    "cannot measure (the rows they come from say why)"
                )
            source, params = f"{spec.cell.formula.text} ({spec.cell.text})", {}
        if lab is not None and is_cycles(spec.thesis_unit) and lab_clock and is_time(unit):
            cycles = time_to_cycles(lab.value, unit, clock_ghz=lab_clock, to_unit=spec.thesis_unit)
            lab = _with_cycles(lab, cycles)
        row = ReportRow(
            identity=dict(spec.identity),
            column=spec.column,
            label=spec.label,
            unit=unit,
            thesis_unit=spec.thesis_unit,
            source=source,
            params=params,
            status=status,
            lab=lab,
            missing=missing,
            thesis=[
                _thesis_cell(m, spec.thesis.get(m), spec.thesis_unit, unit, machines, lab)
                for m in table.machines
            ],
            kernel_only=kernel_only,
            kernel_only_label=_kernel_label(spec.cell) if kernel_only else "",
        )
        siblings.setdefault((spec.identity, spec.column), row)
        rows.append(row)
    shown = {s.column for s in specs}
    return ReportTable(
        table=table.table,
        title=table.title,
        source=table.source,
        machines=list(table.machines),
        identity_columns=list(table.identity_columns),
        rows=rows,
        caveats=list(table.caveats),
        unmapped=[c for c in table.value_columns if c not in shown],
        measured=sum(r.lab is not None for r in rows),
        unavailable=sum(r.status == "unavailable" for r in rows),
    )


def _kernel_label(cell: Cell) -> str:
    asked = dict(cell.params).get("write_cache") if isinstance(cell, Mapping) else None
    return WRITE_CACHE_LABELS.get(f"kernel-{asked}", "")


def _precision(found: Found) -> float | None:
    median = found.stats.get("median")
    if found.median_ci is None or median is None:
        return None
    return half_width_percent(*found.median_ci, median)


def _flags(found: Found) -> dict[str, str]:
    if found.flags is None:
        return {NOT_JUDGED_FLAG: NOT_JUDGED}
    return {k: str(v) for k, v in found.flags.items()}


def _with_cycles(lab: LabValue, cycles: float) -> LabValue:
    return LabValue(
        value=lab.value,
        source_value=lab.source_value,
        source_unit=lab.source_unit,
        statistic=lab.statistic,
        n=lab.n,
        result_ids=lab.result_ids,
        run_ids=lab.run_ids,
        measured_at=lab.measured_at,
        in_thesis_unit=cycles,
        flags=lab.flags,
        median_ci_percent=lab.median_ci_percent,
    )


def _thesis_cell(
    machine: str,
    printed: Any,
    thesis_unit: str,
    unit: str,
    machines: dict[str, ThesisMachine],
    lab: LabValue | None,
) -> ThesisCell:
    if not is_number(printed):
        return ThesisCell(machine, None, None, None, None)
    value = float(printed)
    if is_cycles(thesis_unit):
        shown = cycles_to_time(
            value, thesis_unit, clock_ghz=machines[machine].clock_ghz, to_unit=unit
        )
    else:
        shown = convert(value, thesis_unit, unit)
    ratio = difference = None
    if lab is not None:
        if unit == "%":
            difference = lab.value - shown
        elif shown > 0 and lab.value > 0:
            ratio = lab.value / shown
    return ThesisCell(machine, value, shown, ratio, difference)


def _describe(mapping: Mapping) -> str:
    what = f"{mapping.statistic} of {mapping.metric}"
    return f"{mapping.suite} / {mapping.benchmark} ({mapping.sut}): {what}"


def _statistic(found: Found, statistic: str) -> float | None:
    name = {"stdev": "stddev", "value": "mean"}.get(statistic, statistic)
    return found.stats.get(name)


def _measured(
    mapping: Mapping, found: dict[Mapping, Found], why: dict[Mapping, str], unit: str
) -> tuple[LabValue | None, str]:
    hit = found.get(mapping)
    if hit is None:
        return None, why.get(mapping, NOT_MEASURED)
    raw = _statistic(hit, mapping.statistic)
    if raw is None:
        return None, (
            f"{NOT_MEASURED}: run {hit.run_id}'s result has {hit.n} sample(s), "
            f"too few for a {mapping.statistic}"
        )
    try:
        value = convert(raw, hit.unit, unit)
    except UnitError as exc:
        return None, f"{NOT_MEASURED}: run {hit.run_id}'s result is in {hit.unit}; {exc}"
    return (
        LabValue(
            value=value,
            source_value=raw,
            source_unit=hit.unit,
            statistic=mapping.statistic,
            n=hit.n,
            result_ids=[hit.result_id],
            run_ids=[hit.run_id],
            measured_at=hit.created_at,
            flags=_flags(hit),
            median_ci_percent=_precision(hit),
        ),
        "",
    )


def _derive(
    spec: _Spec,
    table: ThesisTable,
    siblings: dict[tuple[Any, ...], ReportRow],
    found: dict[Mapping, Found],
    unit: str,
) -> tuple[LabValue | None, str]:
    cell = spec.cell
    assert isinstance(cell, Derived)
    operands: dict[str, float] = {}
    parts: list[LabValue] = []
    lacking: list[str] = []
    for name in sorted(cell.formula.names):
        lab = _operand(name, spec.identity, table, siblings, found)
        if lab is None:
            ref = table.refs.get(name)
            lacking.append(f"{name} ({_describe(ref)})" if ref else table.labels.get(name, name))
            continue
        try:
            operands[name] = (
                convert(lab.value, lab.source_unit, cell.operand_unit)
                if cell.operand_unit
                else lab.value
            )
        except UnitError as exc:
            return None, f"{NOT_MEASURED}: {name}: {exc}"
        parts.append(lab)
    if lacking:
        return None, f"{NOT_MEASURED}: needs {', '.join(lacking)}"
    result = cell.formula.evaluate(operands)
    if result is None:
        return None, f"{NOT_MEASURED}: {cell.formula.text} is undefined for these values"
    try:
        value = convert(result, cell.unit, unit)
    except UnitError as exc:
        return None, f"{NOT_MEASURED}: {exc}"
    stamps = [p.measured_at for p in parts if p.measured_at is not None]
    return (
        LabValue(
            value=value,
            source_value=result,
            source_unit=cell.unit,
            statistic="derived",
            n=None,
            result_ids=sorted({i for p in parts for i in p.result_ids}),
            run_ids=sorted({i for p in parts for i in p.run_ids}),
            measured_at=max(stamps) if stamps else None,
            flags={k: v for p in parts for k, v in p.flags.items()},
        ),
        "",
    )


def _unavailable_operands(
    spec: _Spec,
    table: ThesisTable,
    siblings: dict[tuple[Any, ...], ReportRow],
    lookup: Lookup,
) -> list[str]:
    """The operands of a derived row that this machine cannot measure."""
    assert isinstance(spec.cell, Derived)
    cannot = []
    for name in sorted(spec.cell.formula.names):
        sibling = siblings.get((spec.identity, name))
        ref = table.refs.get(name)
        if sibling is not None:
            if sibling.status == "unavailable":
                cannot.append(sibling.label)
        elif ref is not None and ref in lookup.unavailable:
            cannot.append(f"{name} ({_describe(ref)})")
    return cannot


def _operand(
    name: str,
    identity: tuple[tuple[str, Any], ...],
    table: ThesisTable,
    siblings: dict[tuple[Any, ...], ReportRow],
    found: dict[Mapping, Found],
) -> LabValue | None:
    """A formula's operand: the same thesis row's column, else one of the table's refs.

    The value comes back with ``source_unit`` set to the unit ``value`` is in.
    """
    sibling = siblings.get((identity, name))
    if sibling is not None:
        if sibling.lab is None:
            return None
        return _in_unit(sibling.lab, sibling.unit)
    mapping = table.refs.get(name)
    hit = found.get(mapping) if mapping is not None else None
    if mapping is None or hit is None:
        return None
    raw = _statistic(hit, mapping.statistic)
    if raw is None:
        return None
    return LabValue(
        value=raw,
        source_value=raw,
        source_unit=hit.unit,
        statistic=mapping.statistic,
        n=hit.n,
        result_ids=[hit.result_id],
        run_ids=[hit.run_id],
        measured_at=hit.created_at,
        flags=_flags(hit),
    )


def _in_unit(lab: LabValue, unit: str) -> LabValue:
    return LabValue(
        value=lab.value,
        source_value=lab.value,
        source_unit=unit,
        statistic=lab.statistic,
        n=lab.n,
        result_ids=lab.result_ids,
        run_ids=lab.run_ids,
        measured_at=lab.measured_at,
        flags=lab.flags,
    )
