"""Unit conversion for the reproduction report (services/units.py)."""

import math

import pytest

from xaclab_server.services.units import (
    UnitError,
    convert,
    cycles_to_time,
    time_to_cycles,
)


@pytest.mark.parametrize(
    ("value", "source", "target", "expected"),
    [
        (1.0, "s", "ms", 1e3),
        (1.0, "ms", "us", 1e3),
        (1.0, "us", "ns", 1e3),
        (2500.0, "ns", "us", 2.5),
        (13600.0, "us", "ms", 13.6),
        (7.0, "ms", "s", 0.007),
        (3.0, "us", "us", 3.0),
        # A rate and a time per operation are reciprocals.
        (2000.0, "ops/s", "us", 500.0),
        (4.0, "ops/s", "ms", 250.0),
        (500.0, "us", "ops/s", 2000.0),
        (1.25, "ratio", "ratio", 1.25),
        (1.25, "1", "ratio", 1.25),
        (47.0, "%", "%", 47.0),
        (12.0, "count", "count", 12.0),
    ],
)
def test_convert(value: float, source: str, target: str, expected: float) -> None:
    assert math.isclose(convert(value, source, target), expected, rel_tol=1e-12)


@pytest.mark.parametrize(
    ("source", "target"),
    [("us", "%"), ("ratio", "%"), ("count", "us"), ("bytes", "ms"), ("cycles", "us")],
)
def test_units_that_do_not_convert_say_so(source: str, target: str) -> None:
    with pytest.raises(UnitError, match=f"{source} cannot be shown in {target}"):
        convert(1.0, source, target)


def test_a_rate_that_is_not_positive_has_no_time() -> None:
    with pytest.raises(UnitError, match="no reciprocal"):
        convert(0.0, "ops/s", "us")


def test_cycles_use_the_clock_rate() -> None:
    # Table 4.3, machine 1 (3.0 GHz): 32,216 cycles to enter the handler.
    assert math.isclose(
        cycles_to_time(32216, "cycles", clock_ghz=3.0, to_unit="ns"), 10738.6667, rel_tol=1e-6
    )
    # Table 4.2, machine 4 (300 MHz): 149.4 thousand cycles per page.
    assert math.isclose(
        cycles_to_time(149.4, "kcycles", clock_ghz=0.3, to_unit="us"), 498.0, rel_tol=1e-12
    )
    assert math.isclose(
        time_to_cycles(498.0, "us", clock_ghz=0.3, to_unit="kcycles"), 149.4, rel_tol=1e-12
    )


def test_cycles_need_a_time_and_a_clock() -> None:
    with pytest.raises(UnitError):
        cycles_to_time(1.0, "cycles", clock_ghz=0.0, to_unit="us")
    with pytest.raises(UnitError):
        cycles_to_time(1.0, "cycles", clock_ghz=1.0, to_unit="ops/s")
    with pytest.raises(UnitError):
        time_to_cycles(1.0, "ops/s", clock_ghz=1.0, to_unit="cycles")
