"""A timing series' view against its runs' other configurations (services/reference_view.py)."""

import numpy as np

from xaclab_server.services.detection import Views, detect_views
from xaclab_server.services.edivisive import Options
from xaclab_server.services.reference_view import Sibling, configuration, has_view, relative_view

RUNS = list(range(40))
# The server's defaults: the view at p < 0.001, the series itself beside it at p < 0.0001.
VIEWS = Views(
    Options(
        max_pvalue=0.001, min_change=0.03, noise_factor=1.0, min_points=3, window=50, test="rank"
    ),
    raw_max_pvalue=0.0001,
)
HOST = [float(f) for f in np.random.default_rng(7).lognormal(0.0, 0.10, len(RUNS))]


def _sibling(
    name: str,
    base: float,
    *,
    benchmark: str = "page_touch",
    better: str = "lower",
    factors: list[float] = HOST,
) -> Sibling:
    power = 1.0 if better == "lower" else -1.0  # a slow host lowers a rate
    return Sibling(
        benchmark=benchmark,
        configuration=configuration("libxac", {"config": name}),
        better=better,
        points={run: base * factors[run] ** power for run in RUNS},
    )


def _view(
    values: list[float],
    siblings: list[Sibling],
    *,
    better: str = "lower",
    benchmark: str = "page_touch",
) -> list[float] | None:
    return relative_view(
        benchmark=benchmark,
        configuration=configuration("libxac", {"config": "mine"}),
        better=better,
        runs=RUNS,
        values=values,
        siblings=siblings,
    )


def test_a_slow_host_that_slowed_every_configuration_cancels_in_the_view() -> None:
    siblings = [_sibling(name, base) for name, base in (("a", 2.0), ("b", 5.0), ("c", 9.0))]
    mine = [3.0 * f for f in HOST]
    view = _view(mine, siblings)
    assert view is not None
    assert np.std(np.log(mine)) > 0.04
    assert max(view) / min(view) < 1 + 1e-9, "the host's slowness is all taken off"


def test_a_rate_is_divided_the_other_way() -> None:
    siblings = [_sibling(n, 100.0 * (i + 1), better="higher") for i, n in enumerate("abc")]
    mine = [500.0 / f for f in HOST]
    view = _view(mine, siblings, better="higher")
    assert view is not None and max(view) / min(view) < 1 + 1e-9


def test_the_series_own_step_stays_in_the_view_and_only_there_is_it_clear() -> None:
    siblings = [_sibling(name, base) for name, base in (("a", 2.0), ("b", 5.0), ("c", 9.0))]
    mine = [3.0 * f * (1.06 if run >= 20 else 1.0) for run, f in zip(RUNS, HOST, strict=True)]
    view = _view(mine, siblings)
    assert view is not None
    assert abs(np.median(view[20:]) / np.median(view[:20]) - 1.06) < 1e-9
    (found,) = detect_views(mine, view, VIEWS)
    assert (found.split.index, found.view) == (20, "relative")
    assert detect_views(mine, None, VIEWS) == [], "the series alone hides it in the host's noise"


def test_a_step_of_every_configuration_is_found_in_the_series_itself() -> None:
    stepped = [f * (1.15 if run >= 20 else 1.0) for run, f in zip(RUNS, [1.0] * 40, strict=True)]
    siblings = [_sibling(n, b, factors=stepped) for n, b in (("a", 2.0), ("b", 5.0), ("c", 9.0))]
    mine = [3.0 * f for f in stepped]
    view = _view(mine, siblings)
    assert view is not None and max(view) / min(view) < 1 + 1e-9, "it cancels in the view"
    (found,) = detect_views(mine, view, VIEWS)
    assert (found.split.index, found.view) == (20, "series")


def test_too_few_other_configurations_take_the_suite_then_none() -> None:
    two = [_sibling("a", 2.0), _sibling("b", 5.0)]
    elsewhere = [_sibling(n, 4.0, benchmark="fit") for n in ("x", "y")]
    mine = [3.0 * f for f in HOST]
    assert _view(mine, two) is None
    view = _view(mine, two + elsewhere)
    assert view is not None and max(view) / min(view) < 1 + 1e-9, "the suite's four"


def test_other_metrics_of_its_own_configuration_never_count() -> None:
    """A throughput and its latency are one measurement: a real change moves both."""
    own = Sibling(
        benchmark="page_touch",
        configuration=configuration("libxac", {"config": "mine"}),
        better="higher",
        points={run: 1 / f for run, f in zip(RUNS, HOST, strict=True)},
    )
    assert _view([3.0 * f for f in HOST], [own, _sibling("a", 2.0), _sibling("b", 5.0)]) is None


def test_a_run_no_sibling_ran_keeps_its_point() -> None:
    siblings = [_sibling(name, base) for name, base in (("a", 2.0), ("b", 5.0), ("c", 9.0))]
    for sibling in siblings:
        del sibling.points[5]
    view = _view([3.0] * len(RUNS), siblings)
    assert view is not None and view[5] == 3.0


def test_only_times_and_rates_have_a_view() -> None:
    assert all(has_view(unit) for unit in ("ns", "us", "ms", "s", "ops/s"))
    assert not any(has_view(unit) for unit in ("count", "bytes", "ratio", "1", "pages"))
