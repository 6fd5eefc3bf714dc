"""The separation of a change's two sides, in their own spread (services/bisect_choice.py)."""

import pytest

from xaclab_server.services.bisect_choice import sides_apart

STEADY_BEFORE = [10.0, 10.05, 9.96, 10.02, 9.97, 10.04, 9.99, 10.01]


def test_two_steady_sides_lie_many_spreads_apart() -> None:
    after = [v * 1.2 for v in STEADY_BEFORE[:6]]
    # 2 apart, in a spread of about 0.04 (the MAD of the sides times 1.4826)
    assert 30 < sides_apart(STEADY_BEFORE, after) < 100


def test_a_side_that_scatters_brings_the_separation_down_whatever_the_other_side() -> None:
    quiet_before = [10.0 + k * 1e-5 for k in range(8)]
    scattered_after = [19.0, 11.0, 18.5, 11.5, 18.0, 12.0]
    assert sides_apart(quiet_before, scattered_after) < 2
    assert sides_apart(scattered_after, quiet_before) == pytest.approx(
        sides_apart(quiet_before, scattered_after)
    )


def test_identical_points_have_a_floor_and_no_division_by_zero() -> None:
    # the floor is a billionth of the larger mean
    assert sides_apart([1.0, 1.0, 1.0], [2.0, 2.0, 2.0]) == pytest.approx(5e8)
    assert sides_apart([0.0, 0.0], [0.0, 0.0]) == 0.0
