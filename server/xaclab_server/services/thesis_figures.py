"""contracts/thesis-figures.json, read into typed tables for the reproduction report.

The file is the single source of the thesis's numbers and of how each number
maps onto xaclab results (docs/thesis-figures.md).  Only the tables the
report shows are parsed, strictly: a mapping the report cannot use raises
:class:`ThesisFiguresError` at start-up rather than showing a wrong row.

A cell of a thesis row maps either to a :class:`Mapping` (one statistic of
the newest matching result) or to a :class:`Derived` value: a
:class:`Formula` over the row's other cells and the table's ``refs``.
"""

import ast
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xaclab_server.services.units import CYCLE_UNITS, RATE_UNIT, TIME_UNITS

FORMAT = "xaclab-thesis-figures"
FORMAT_VERSION = 1
STATISTICS = ("mean", "median", "min", "max", "stdev", "p99", "value")
KNOWN_UNITS = frozenset(
    {*TIME_UNITS, *CYCLE_UNITS, RATE_UNIT, "ratio", "1", "%", "count", "bytes", "pages"}
)
ParamValue = str | int | float | bool


class ThesisFiguresError(ValueError):
    """contracts/thesis-figures.json does not say what the report needs; the message names where."""


@dataclass(frozen=True, slots=True)
class ThesisMachine:
    name: str
    description: str
    clock_ghz: float


@dataclass(frozen=True, slots=True)
class Mapping:
    """One statistic of the newest result matching suite, benchmark, sut, metric and params."""

    suite: str
    benchmark: str
    sut: str
    metric: str
    unit: str
    statistic: str
    params: tuple[tuple[str, ParamValue], ...]
    status: str = "exists"
    note: str = ""

    @property
    def params_dict(self) -> dict[str, ParamValue]:
        return dict(self.params)

    def with_params(self, extra: dict[str, ParamValue]) -> "Mapping":
        merged = {**self.params_dict, **extra}
        return Mapping(
            self.suite,
            self.benchmark,
            self.sut,
            self.metric,
            self.unit,
            self.statistic,
            tuple(sorted(merged.items())),
            self.status,
            self.note,
        )


class Formula:
    """Arithmetic (+ - * / and numbers) over names; nothing else parses."""

    _OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div)

    def __init__(self, text: str) -> None:
        self.text = text
        try:
            self._tree = ast.parse(text, mode="eval")
        except SyntaxError as exc:
            raise ThesisFiguresError(f"formula {text!r} does not parse: {exc.msg}") from None
        self.names = frozenset(self._check(self._tree.body))

    def _check(self, node: ast.AST) -> set[str]:
        if isinstance(node, ast.BinOp) and isinstance(node.op, self._OPERATORS):
            return self._check(node.left) | self._check(node.right)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            return self._check(node.operand)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return set()
        if isinstance(node, ast.Name):
            return {node.id}
        raise ThesisFiguresError(f"formula {self.text!r} may only use + - * /, numbers and names")

    def evaluate(self, values: dict[str, float]) -> float | None:
        """The value, or None when it is undefined (a division by zero, an infinity)."""
        try:
            result = self._eval(self._tree.body, values)
        except ZeroDivisionError:
            return None
        return result if math.isfinite(result) else None

    def _eval(self, node: ast.AST, values: dict[str, float]) -> float:
        if isinstance(node, ast.BinOp):
            left, right = self._eval(node.left, values), self._eval(node.right, values)
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Sub):
                return left - right
            if isinstance(node.op, ast.Mult):
                return left * right
            return left / right
        if isinstance(node, ast.UnaryOp):
            operand = self._eval(node.operand, values)
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.Constant):
            assert isinstance(node.value, int | float)
            return float(node.value)
        assert isinstance(node, ast.Name)
        return values[node.id]


@dataclass(frozen=True, slots=True)
class Derived:
    """A value computed from other lab values; operands are put in ``operand_unit`` first."""

    text: str
    formula: Formula
    unit: str
    operand_unit: str | None


Cell = Mapping | Derived


@dataclass(frozen=True, slots=True)
class ThesisRow:
    machine: str
    identity: tuple[tuple[str, Any], ...]
    values: dict[str, Any]
    cells: dict[str, Cell]


@dataclass(frozen=True, slots=True)
class ModelCell:
    """A fitted model constant (table 4.6's a and b) set against a thesis column."""

    name: str
    label: str
    mapping: Mapping
    params_from_row: tuple[str, ...]
    compare_with: str


@dataclass(frozen=True, slots=True)
class ThesisTable:
    table: str
    title: str
    source: str
    machines: tuple[str, ...]
    identity_columns: tuple[str, ...]
    value_columns: tuple[str, ...]
    units: dict[str, str]
    labels: dict[str, str]
    refs: dict[str, Mapping]
    rows: tuple[ThesisRow, ...]
    model: tuple[ModelCell, ...]
    caveats: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ThesisFigures:
    thesis: str
    machines: dict[str, ThesisMachine]
    tables: dict[str, ThesisTable]


def load_thesis_figures(path: Path, tables: tuple[str, ...]) -> ThesisFigures:
    """Parse ``path``, keeping ``tables`` in that order; ThesisFiguresError if it cannot."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ThesisFiguresError(f"{path}: {exc}") from exc
    return parse_thesis_figures(document, tables)


def parse_thesis_figures(document: Any, tables: tuple[str, ...]) -> ThesisFigures:
    doc = _object(document, "the file")
    if doc.get("format") != FORMAT or doc.get("format_version") != FORMAT_VERSION:
        raise ThesisFiguresError(f"the file is not {FORMAT} version {FORMAT_VERSION}")
    machines = {}
    for name, raw in _object(doc.get("machines"), "machines").items():
        entry = _object(raw, f"machine {name}")
        clock = entry.get("clock_ghz")
        if not isinstance(clock, int | float) or isinstance(clock, bool) or clock <= 0:
            raise ThesisFiguresError(f"machine {name}: clock_ghz must be a positive number")
        machines[name] = ThesisMachine(name, _text(entry.get("description"), name), float(clock))
    by_name = {}
    for raw in _list(doc.get("tables"), "tables"):
        table = _object(raw, "a table")
        by_name[str(table.get("table"))] = table
    parsed = {}
    for name in tables:
        if name not in by_name:
            raise ThesisFiguresError(f"table {name} is missing")
        parsed[name] = _table(by_name[name], machines)
    return ThesisFigures(_text(doc.get("thesis"), "thesis"), machines, parsed)


def _table(raw: dict[str, Any], machines: dict[str, ThesisMachine]) -> ThesisTable:
    name = str(raw["table"])
    where = f"table {name}"
    table_machines = tuple(str(m) for m in _list(raw.get("machine"), f"{where} machine"))
    for machine in table_machines:
        if machine not in machines:
            raise ThesisFiguresError(f"{where}: machine {machine} is not described")
    columns = [str(c) for c in _list(raw.get("columns"), f"{where} columns")]
    units = {str(k): str(v) for k, v in _object(raw.get("units"), f"{where} units").items()}
    for column, unit in units.items():
        if column not in columns or unit not in KNOWN_UNITS:
            raise ThesisFiguresError(f"{where}: unit {unit!r} of {column!r} is not usable")
    identity = tuple(c for c in columns if c != "machine" and c not in units)
    values = tuple(c for c in columns if c in units)
    refs = {
        str(k): _mapping(v, f"{where} ref {k}")
        for k, v in _object(raw.get("refs", {}), f"{where} refs").items()
    }
    rows = tuple(
        _row(_object(r, where), where, identity, values, refs, table_machines)
        for r in _list(raw.get("rows"), f"{where} rows")
    )
    model = tuple(
        _model(str(k), _object(v, f"{where} model {k}"), where, identity, values)
        for k, v in _object(raw.get("model_maps_to") or {}, f"{where} model_maps_to").items()
    )
    labels = {str(k): str(v) for k, v in _object(raw.get("labels", {}), f"{where} labels").items()}
    return ThesisTable(
        table=name,
        title=_text(raw.get("title"), where),
        source=_text(raw.get("source"), where),
        machines=table_machines,
        identity_columns=identity,
        value_columns=values,
        units=units,
        labels=labels,
        refs=refs,
        rows=rows,
        model=model,
        caveats=tuple(str(c) for c in _list(raw.get("caveats", []), f"{where} caveats")),
    )


def _row(
    raw: dict[str, Any],
    where: str,
    identity: tuple[str, ...],
    values: tuple[str, ...],
    refs: dict[str, Mapping],
    machines: tuple[str, ...],
) -> ThesisRow:
    machine = str(raw.get("machine"))
    if machine not in machines:
        raise ThesisFiguresError(f"{where}: a row names machine {machine}, not in the table")
    where = f"{where} machine {machine}"
    cells: dict[str, Cell] = {}
    for column, cell in _object(raw.get("maps_to") or {}, f"{where} maps_to").items():
        if column not in values:
            raise ThesisFiguresError(f"{where}: maps_to names {column!r}, not a value column")
        entry = _object(cell, f"{where} {column}")
        if "formula" in entry:
            derived = _derived(entry, f"{where} {column}")
            unknown = derived.formula.names - set(values) - set(refs)
            if unknown:
                raise ThesisFiguresError(
                    f"{where} {column}: formula names {', '.join(sorted(unknown))}, "
                    "neither a column nor a ref"
                )
            cells[column] = derived
        elif "derived" not in entry:
            cells[column] = _mapping(entry, f"{where} {column}")
    return ThesisRow(
        machine=machine,
        identity=tuple((c, raw.get(c)) for c in identity),
        values={c: raw.get(c) for c in values},
        cells=cells,
    )


def _model(
    name: str, raw: dict[str, Any], where: str, identity: tuple[str, ...], values: tuple[str, ...]
) -> ModelCell:
    from_row = tuple(str(p) for p in _list(raw.get("params_from_row", []), f"{where} {name}"))
    compare_with = str(raw.get("compare_with"))
    if compare_with not in values or not set(from_row) <= set(identity):
        raise ThesisFiguresError(f"{where} model {name}: compare_with or params_from_row is wrong")
    return ModelCell(
        name=name,
        label=_text(raw.get("label"), f"{where} model {name}"),
        mapping=_mapping(raw, f"{where} model {name}"),
        params_from_row=from_row,
        compare_with=compare_with,
    )


def _mapping(raw: Any, where: str) -> Mapping:
    entry = _object(raw, where)
    fields = {}
    for key in ("suite", "benchmark", "sut", "metric", "unit", "statistic"):
        fields[key] = _text(entry.get(key), f"{where} {key}")
    if fields["statistic"] not in STATISTICS:
        raise ThesisFiguresError(f"{where}: statistic {fields['statistic']!r} is not known")
    if fields["unit"] not in KNOWN_UNITS:
        raise ThesisFiguresError(f"{where}: unit {fields['unit']!r} is not known")
    params = _object(entry.get("params", {}), f"{where} params")
    for key, value in params.items():
        if not isinstance(value, str | int | float):
            raise ThesisFiguresError(f"{where}: param {key} must be a string, number or boolean")
    return Mapping(
        **fields,
        params=tuple(sorted(params.items())),
        status=str(entry.get("status", "exists")),
        note=str(entry.get("note", "")),
    )


def _derived(entry: dict[str, Any], where: str) -> Derived:
    unit = _text(entry.get("unit"), f"{where} unit")
    operand_unit = entry.get("operand_unit")
    for value in (unit, operand_unit):
        if value is not None and value not in KNOWN_UNITS:
            raise ThesisFiguresError(f"{where}: unit {value!r} is not known")
    return Derived(
        text=str(entry.get("derived", "")),
        formula=Formula(_text(entry.get("formula"), f"{where} formula")),
        unit=unit,
        operand_unit=str(operand_unit) if operand_unit is not None else None,
    )


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ThesisFiguresError(f"{where} must be a JSON object")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise ThesisFiguresError(f"{where} must be a JSON array")
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ThesisFiguresError(f"{where}: a non-empty string is missing")
    return value
