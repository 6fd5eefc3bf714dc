"""Expand a panel's rawSql the way Grafana does before it reaches PostgreSQL.

The dashboard tests run every panel query against a real database, so the SQL
they run must be the SQL Grafana would send.  Grafana rewrites a query in
three steps; this module reimplements each one:

1. The frontend replaces template variables (``$machine``, ``${machine}``,
   ``${machine:csv}``, ``[[machine]]``) through the SQL datasources'
   ``interpolateVariable``: a multi-value or include-all variable becomes
   quoted literals joined by commas, a single value has its quotes doubled
   and is not quoted.  Unknown variables are left alone.
2. The backend's global substitutions (``sqleng.Interpolate``):
   ``$__interval_ms``, ``$__interval``, ``$__unixEpochFrom()``,
   ``$__unixEpochTo()``.
3. The PostgreSQL macro engine (``pkg/tsdb/grafana-postgresql-datasource/
   macros.go``): every ``$name(args)`` is a macro; an unknown one is an error.

Behaviour follows Grafana's sources, including the quirks: ``$__timeGroup``
directly followed by ``,`` gets ``AS "time"`` (pre-5.3 compatibility),
intervals such as ``'5m'`` or ``1d`` are parsed like Go's ``gtime``, and
numbers are printed like Go's ``%v`` (``1036800`` seconds is ``1.0368e+06``).
Newer Grafana versions also strip SQL comments before expanding; dashboards
here contain no comments, so both give the same SQL.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal

__all__ = [
    "FillMode",
    "MacroError",
    "TimeRange",
    "Variable",
    "expand",
    "expand_macros",
    "format_interval",
    "interpolate_global",
    "interpolate_variables",
    "parse_interval",
]


class MacroError(ValueError):
    """A macro Grafana would refuse: unknown name, missing argument, bad interval or fill."""


@dataclass(frozen=True)
class TimeRange:
    start: datetime
    end: datetime

    def __post_init__(self) -> None:
        if self.start.tzinfo is None or self.end.tzinfo is None:
            raise ValueError("time range bounds must be timezone-aware")


@dataclass(frozen=True)
class Variable:
    """A dashboard template variable's current value, as the frontend holds it."""

    value: str | int | float | Sequence[str]
    multi: bool = False
    include_all: bool = False


@dataclass
class FillMode:
    """What a ``$__timeGroup(col, interval, fill)`` asks the backend to fill in."""

    interval_seconds: float
    mode: str  # "null", "previous" or "value"
    value: float | None = None


@dataclass
class _State:
    fill: FillMode | None = field(default=None)


# -- Go formatting -----------------------------------------------------------


def _go_float(x: float) -> str:
    """Go's ``%v`` for a float64 (``%g``, shortest digits).

    Go switches to the exponent form when the decimal exponent is below -4 or
    at least 6, so 300 prints as ``300`` but 1036800 as ``1.0368e+06``.
    """
    if x == 0:
        return "0"
    digits, exponent = _shortest_digits(x)
    point = len(digits) + exponent  # position of the decimal point
    exp10 = point - 1
    sign = "-" if x < 0 else ""
    if exp10 < -4 or exp10 >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exp10 < 0 else '+'}{abs(exp10):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _shortest_digits(x: float) -> tuple[str, int]:
    """The shortest round-tripping decimal digits of |x| and their exponent."""
    as_decimal = Decimal(repr(abs(x))).normalize()
    _, digit_tuple, exponent = as_decimal.as_tuple()
    assert isinstance(exponent, int)
    return "".join(map(str, digit_tuple)), exponent


def _rfc3339_nano(moment: datetime) -> str:
    """Go's ``time.RFC3339Nano`` in UTC: fraction without trailing zeros, ``Z``.

    Python's datetime stops at microseconds; Grafana's time ranges are in
    milliseconds, so nothing is lost.
    """
    utc = moment.astimezone(UTC)
    text = utc.strftime("%Y-%m-%dT%H:%M:%S")
    if utc.microsecond:
        text += "." + f"{utc.microsecond:06d}".rstrip("0")
    return text + "Z"


def _unix(moment: datetime) -> int:
    """Go's ``Time.Unix()``: whole seconds, rounded towards minus infinity."""
    delta = moment.astimezone(UTC) - datetime(1970, 1, 1, tzinfo=UTC)
    return delta.days * 86400 + delta.seconds


def _unix_nano(moment: datetime) -> int:
    delta = moment.astimezone(UTC) - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


# -- intervals (gtime) ------------------------------------------------------

_DATE_UNIT = re.compile(r"^(\d+)([dwMy])$")
_GO_DURATION_PART = re.compile(r"(\d*\.?\d*)(ns|us|µs|μs|ms|s|m|h)")
_GO_UNIT_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}


def _go_parse_duration(text: str) -> timedelta:
    """Go's ``time.ParseDuration``: ``[-+]`` then number+unit pairs, or a bare ``0``."""
    rest = text
    sign = 1
    if rest[:1] in "+-" and rest:
        sign = -1 if rest[0] == "-" else 1
        rest = rest[1:]
    if rest == "0":
        return timedelta(0)
    if not rest:
        raise ValueError(f"invalid duration {text!r}")
    total_ns = Decimal(0)
    pos = 0
    while pos < len(rest):
        match = _GO_DURATION_PART.match(rest, pos)
        if not match or match.group(1) in ("", "."):
            raise ValueError(f"invalid duration {text!r}")
        total_ns += Decimal(match.group(1)) * _GO_UNIT_NS[match.group(2)]
        pos = match.end()
    return timedelta(microseconds=float(sign * total_ns / 1000))


def parse_interval(text: str, now: datetime | None = None) -> timedelta:
    """gtime.ParseInterval: Go durations plus ``d``, ``w``, ``M``, ``y`` counted on the calendar."""
    match = _DATE_UNIT.match(text)
    if not match:
        return _go_parse_duration(text)
    count, unit = int(match.group(1)), match.group(2)
    start = (now or datetime.now(UTC)).astimezone(UTC)
    if unit == "d":
        return timedelta(days=count)
    if unit == "w":
        return timedelta(days=7 * count)
    if unit == "M":
        return _add_months(start, count) - start
    return _add_months(start, 12 * count) - start


def _add_months(moment: datetime, months: int) -> datetime:
    """Go's ``AddDate(0, months, 0)``: overflowing days roll into the next month."""
    index = moment.month - 1 + months
    year, month = moment.year + index // 12, index % 12 + 1
    first = moment.replace(year=year, month=month, day=1)
    return first + timedelta(days=moment.day - 1)


def format_interval(interval: timedelta) -> str:
    """gtime.FormatInterval: the largest whole unit of y, d, h, m, s, ms (at least 1ms)."""
    ns = (
        round(interval.total_seconds() * 1e9)
        if interval.microseconds
        else ((interval.days * 86400 + interval.seconds) * 1_000_000_000)
    )
    for unit, size in (
        ("y", 365 * 86400 * 10**9),
        ("d", 86400 * 10**9),
        ("h", 3600 * 10**9),
        ("m", 60 * 10**9),
        ("s", 10**9),
        ("ms", 10**6),
    ):
        if ns >= size:
            return f"{ns // size}{unit}"
    return "1ms"


# -- step 1: template variables ------------------------------------------------

_VARIABLE = re.compile(r"\$(\w+)|\[\[(\w+?)(?::(\w+))?\]\]|\$\{(\w+)(?:\.([^:^}]+))?(?::([^}]+))?\}")


def _quote_literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _sql_format(value: str | int | float | Sequence[str], variable: Variable) -> str:
    """The SQL datasources' ``interpolateVariable``."""
    if isinstance(value, str):
        if variable.multi or variable.include_all:
            return _quote_literal(value)
        return value.replace("'", "''")
    if isinstance(value, int | float):
        # JavaScript's String(number): integral values print without ".0".
        return str(int(value)) if float(value).is_integer() else repr(value)
    return ",".join(_quote_literal(str(v)) for v in value)


def _explicit_format(value: str | int | float | Sequence[str], fmt: str) -> str:
    """The few ``${var:format}`` formats a SQL panel uses."""
    values = [str(value)] if isinstance(value, str | int | float) else [str(v) for v in value]
    if fmt == "csv":
        return ",".join(values)
    if fmt == "singlequote":
        return ",".join("'" + v.replace("'", "\\'") + "'" for v in values)
    if fmt == "doublequote":
        return ",".join('"' + v.replace('"', '\\"') + '"' for v in values)
    if fmt == "sqlstring":
        return ",".join(_quote_literal(v) for v in values)
    if fmt == "pipe":
        return "|".join(values)
    if fmt == "raw":
        return values[0] if len(values) == 1 else "{" + ",".join(values) + "}"
    raise ValueError(f"template variable format {fmt!r} is not supported here")


def interpolate_variables(sql: str, variables: Mapping[str, Variable]) -> str:
    """Replace known template variables; leave unknown ones (and macros) untouched."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2) or match.group(4)
        fmt = match.group(3) or match.group(6)
        variable = variables.get(name)
        if variable is None:
            return match.group(0)
        if fmt:
            return _explicit_format(variable.value, fmt)
        return _sql_format(variable.value, variable)

    return _VARIABLE.sub(replace, sql)


# -- step 2: global substitutions -------------------------------------------------


def interpolate_global(sql: str, time_range: TimeRange, interval: timedelta) -> str:
    """sqleng.Interpolate: plain string replacements, in Grafana's order."""
    interval_ms = (interval.days * 86400 + interval.seconds) * 1000 + interval.microseconds // 1000
    sql = sql.replace("$__interval_ms", str(interval_ms))
    sql = sql.replace("$__interval", format_interval(interval))
    sql = sql.replace("$__unixEpochFrom()", str(_unix(time_range.start)))
    return sql.replace("$__unixEpochTo()", str(_unix(time_range.end)))


# -- step 3: PostgreSQL macros ----------------------------------------------------

_MACRO = re.compile(r"\$([_a-zA-Z0-9]+)\(([^)]*)\)")


def _fill_mode(state: _State, interval: timedelta, fill: str) -> None:
    seconds = interval.total_seconds()
    if fill == "NULL":
        state.fill = FillMode(seconds, "null")
    elif fill == "previous":
        state.fill = FillMode(seconds, "previous")
    else:
        try:
            value = float(fill)
        except ValueError:
            raise MacroError(f"error parsing fill value {fill}") from None
        state.fill = FillMode(seconds, "value", value)


def _group_interval(name: str, args: list[str], state: _State, now: datetime) -> timedelta:
    if len(args) < 2:
        raise MacroError(f"macro {name} needs time column and interval and optional fill value")
    try:
        interval = parse_interval(args[1].strip("'"), now)
    except ValueError:
        raise MacroError(f"error parsing interval {args[1]}") from None
    if len(args) == 3:
        _fill_mode(state, interval, args[2])
    return interval


def _evaluate(
    name: str,
    args: list[str],
    time_range: TimeRange,
    state: _State,
    timescaledb: bool,
    now: datetime,
) -> str:
    start, end = time_range.start, time_range.end
    needs_column = {"__time", "__timeEpoch", "__timeFilter", "__unixEpochFilter", "__unixEpochNanoFilter"}
    if name in needs_column and not args:
        raise MacroError(f"missing time column argument for macro {name}")
    if name == "__time":
        return f'{args[0]} AS "time"'
    if name == "__timeEpoch":
        return f'extract(epoch from {args[0]}) as "time"'
    if name == "__timeFilter":
        return f"{args[0]} BETWEEN '{_rfc3339_nano(start)}' AND '{_rfc3339_nano(end)}'"
    if name == "__timeFrom":
        return f"'{_rfc3339_nano(start)}'"
    if name == "__timeTo":
        return f"'{_rfc3339_nano(end)}'"
    if name == "__timeGroup":
        seconds = _group_interval(name, args, state, now).total_seconds()
        if timescaledb:
            return f"time_bucket('{seconds:.3f}s',{args[0]})"
        return f"floor(extract(epoch from {args[0]})/{_go_float(seconds)})*{_go_float(seconds)}"
    if name == "__timeGroupAlias":
        return _evaluate("__timeGroup", args, time_range, state, timescaledb, now) + ' AS "time"'
    if name == "__unixEpochFilter":
        return f"{args[0]} >= {_unix(start)} AND {args[0]} <= {_unix(end)}"
    if name == "__unixEpochNanoFilter":
        return f"{args[0]} >= {_unix_nano(start)} AND {args[0]} <= {_unix_nano(end)}"
    if name == "__unixEpochNanoFrom":
        return str(_unix_nano(start))
    if name == "__unixEpochNanoTo":
        return str(_unix_nano(end))
    if name == "__unixEpochGroup":
        seconds = _group_interval(name, args, state, now).total_seconds()
        return f"floor(({args[0]})/{_go_float(seconds)})*{_go_float(seconds)}"
    if name == "__unixEpochGroupAlias":
        return _evaluate("__unixEpochGroup", args, time_range, state, timescaledb, now) + ' AS "time"'
    raise MacroError(f"unknown macro {name!r}")


def expand_macros(
    sql: str,
    time_range: TimeRange,
    *,
    timescaledb: bool = False,
    now: datetime | None = None,
) -> tuple[str, FillMode | None]:
    """The PostgreSQL macro engine.  Returns the SQL and the fill mode a macro asked for."""
    state = _State()
    original = sql
    moment = now or datetime.now(UTC)

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        # Grafana looks at the first occurrence of the same text in the
        # original query, not at this match, to decide on the old alias form.
        if name == "__timeGroup":
            index = original.find(match.group(0))
            if index >= 0:
                after = index + len(match.group(0))
                if after < len(original) and original[after] == ",":
                    name = "__timeGroupAlias"
        args = [arg.strip(" ") for arg in match.group(2).split(",")]
        return _evaluate(name, args, time_range, state, timescaledb, moment)

    return _MACRO.sub(replace, sql), state.fill


def expand(
    sql: str,
    time_range: TimeRange,
    *,
    variables: Mapping[str, Variable] | None = None,
    interval: timedelta = timedelta(minutes=1),
    timescaledb: bool = False,
) -> str:
    """All three steps, in Grafana's order: the SQL PostgreSQL receives."""
    sql = interpolate_variables(sql, variables or {})
    sql = interpolate_global(sql, time_range, interval)
    expanded, _ = expand_macros(sql, time_range, timescaledb=timescaledb)
    return expanded
