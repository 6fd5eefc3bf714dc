"""Student's t-test of the detector, held to SciPy's."""

import math

import numpy as np
import pytest
from scipy import stats

from xaclab_server.services.student_t import incomplete_beta, t_test, two_sided_p


@pytest.mark.parametrize("seed", range(40))
def test_p_values_agree_with_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.normal(10, rng.uniform(0.1, 3), size=int(rng.integers(1, 30)))
    b = rng.normal(10 + rng.uniform(-2, 2), rng.uniform(0.1, 3), size=int(rng.integers(1, 30)))
    if len(a) + len(b) < 3:
        b = np.append(b, 11.0)
    ours = t_test(a, b)
    theirs = stats.ttest_ind(a, b, equal_var=True)
    assert ours.p == pytest.approx(float(theirs.pvalue), abs=1e-9)
    assert (ours.mean_before, ours.mean_after) == pytest.approx((a.mean(), b.mean()))


@pytest.mark.parametrize(("t", "df"), [(0.0, 3), (1.0, 1), (2.5, 10), (-7.0, 40), (40.0, 5)])
def test_the_t_tail_is_scipys(t: float, df: int) -> None:
    assert two_sided_p(t, df) == pytest.approx(2 * float(stats.t.sf(abs(t), df)), abs=1e-12)


def test_incomplete_beta_ends_and_symmetry() -> None:
    assert incomplete_beta(0.0, 2, 3) == 0.0 and incomplete_beta(1.0, 2, 3) == 1.0
    for x in (0.1, 0.5, 0.9):
        assert incomplete_beta(x, 2.5, 0.5) == pytest.approx(1 - incomplete_beta(1 - x, 0.5, 2.5))
        assert incomplete_beta(x, 2.5, 0.5) == pytest.approx(float(stats.beta.cdf(x, 2.5, 0.5)))


def test_sides_without_spread_are_decided_without_dividing_by_zero() -> None:
    assert t_test([100.0] * 12, [115.0] * 12).p == 0.0
    assert t_test([100.0] * 12, [100.0] * 12).p == 1.0
    assert t_test([1.0], [2.0]).p == 1.0  # two points: nothing to test
    assert not math.isnan(t_test([1.0, 1.0], [1.0, 3.0]).p)
    with pytest.raises(ValueError):
        t_test([], [1.0])
