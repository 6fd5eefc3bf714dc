"""Unit conversion for the thesis-reproduction report (docs/thesis-reproduction.md).

Units are the result format's (``ns`` ``us`` ``ms`` ``s`` ``ops/s`` ``ratio`` ``count``
``bytes`` ``pages`` ``1``) plus the thesis's ``cycles``, ``kcycles`` and ``%``.

- Times convert by scale.
- A rate in ``ops/s`` and a time per operation are reciprocals: 2,000 ops/s is
  500 us per operation (the thesis prints time per insert, the tree programs
  print throughput).
- Cycles need a clock rate: :func:`cycles_to_time` and :func:`time_to_cycles`.
- ``ratio`` and ``1`` are the same dimensionless unit.

Anything else converts only to itself; :class:`UnitError` says why not.
"""

# Powers of ten, so that 500 ns is exactly 0.5 us.
TIME_UNITS: dict[str, int] = {"ns": -9, "us": -6, "ms": -3, "s": 0}
CYCLE_UNITS: dict[str, float] = {"cycles": 1.0, "kcycles": 1e3}
RATE_UNIT = "ops/s"
_SAME = {"1": "ratio"}


class UnitError(ValueError):
    """Two units that do not convert into each other; the message is a sentence."""


def is_time(unit: str) -> bool:
    return unit in TIME_UNITS


def is_cycles(unit: str) -> bool:
    return unit in CYCLE_UNITS


def convert(value: float, from_unit: str, to_unit: str) -> float:
    """``value`` in ``from_unit`` expressed in ``to_unit``; UnitError if they do not convert."""
    source, target = _SAME.get(from_unit, from_unit), _SAME.get(to_unit, to_unit)
    if source == target:
        return value
    if is_time(source) and is_time(target):
        return _scale(value, TIME_UNITS[source] - TIME_UNITS[target])
    if source == RATE_UNIT and is_time(target):
        return _scale(_reciprocal(value, from_unit), -TIME_UNITS[target])
    if is_time(source) and target == RATE_UNIT:
        return 1.0 / _scale(_positive(value, from_unit), TIME_UNITS[source])
    raise UnitError(f"A value in {from_unit} cannot be shown in {to_unit}.")


def cycles_to_time(value: float, unit: str, *, clock_ghz: float, to_unit: str) -> float:
    """A cycle count on a ``clock_ghz`` processor as a time in ``to_unit``."""
    if not is_cycles(unit) or not is_time(to_unit):
        raise UnitError(f"{unit} to {to_unit} is not a conversion from cycles to a time.")
    if clock_ghz <= 0:
        raise UnitError("A clock rate must be positive to convert cycles.")
    nanoseconds = value * CYCLE_UNITS[unit] / clock_ghz
    return _scale(nanoseconds, TIME_UNITS["ns"] - TIME_UNITS[to_unit])


def time_to_cycles(value: float, unit: str, *, clock_ghz: float, to_unit: str) -> float:
    """A time in ``unit`` as cycles (``to_unit`` cycles or kcycles) of a ``clock_ghz`` clock."""
    if not is_time(unit) or not is_cycles(to_unit):
        raise UnitError(f"{unit} to {to_unit} is not a conversion from a time to cycles.")
    if clock_ghz <= 0:
        raise UnitError("A clock rate must be positive to convert to cycles.")
    nanoseconds = _scale(value, TIME_UNITS[unit] - TIME_UNITS["ns"])
    return nanoseconds * clock_ghz / CYCLE_UNITS[to_unit]


def _scale(value: float, exponent: int) -> float:
    """``value`` times 10 ** ``exponent``, rounded once."""
    power = float(10 ** abs(exponent))
    return value * power if exponent >= 0 else value / power


def _positive(value: float, unit: str) -> float:
    if value <= 0:
        raise UnitError(f"{value:g} {unit} has no reciprocal (it is not positive).")
    return value


def _reciprocal(value: float, unit: str) -> float:
    return 1.0 / _positive(value, unit)
