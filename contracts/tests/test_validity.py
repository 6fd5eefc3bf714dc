"""The shared definitions of doubt: the median's interval, the validity rules, the write
cache's scope, and the suite's repetition rule."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest

from xaclab_contracts import precision, validity
from xaclab_contracts.fingerprint import identity_differences
from xaclab_contracts.suites import BestOf, SuiteError, parse_suite


def _exact_ranks(n: int) -> tuple[int, int]:
    """The largest k with P(Binomial(n, 1/2) < k) <= 0.025, by brute force."""
    k, below = 0, 0
    while (below + math.comb(n, k)) / 2**n <= 0.025:
        below += math.comb(n, k)
        k += 1
    return k, n + 1 - k


def test_the_interval_of_the_median_uses_the_tabulated_order_statistics() -> None:
    # Conover, Practical Nonparametric Statistics, table A3: n = 10 -> x(2)..x(9); 20 -> 6..15.
    assert precision.median_interval_ranks(5) is None
    assert precision.median_interval_ranks(6) == (1, 6)
    assert precision.median_interval_ranks(10) == (2, 9)
    assert precision.median_interval_ranks(20) == (6, 15)
    assert precision.median_interval_ranks(100) == (40, 61)
    for n in (1001, 1500, 2000, 4001):
        approx, exact = precision.median_interval_ranks(n), _exact_ranks(n)
        assert approx is not None and abs(approx[0] - exact[0]) <= 1, n
    assert precision.median_interval([float(i) for i in range(1, 11)]) == (2.0, 9.0)


def test_half_width_and_the_minimum_detectable_effect() -> None:
    assert precision.half_width_percent(9.0, 11.0, 10.0) == 10.0
    assert precision.half_width_percent(-1.0, 1.0, 0.0) is None
    one = precision.detectable_percent(1.0)
    assert one is not None and math.isclose(one, precision.MDE_FACTOR * math.sqrt(2))
    assert math.isclose(one, 2.02, abs_tol=0.01)
    pair = precision.detectable_percent(3.0, 4.0)
    assert pair is not None and math.isclose(pair, precision.MDE_FACTOR * 5.0)
    assert precision.detectable_percent(1.0, None) is None


def _cache(requested: str, state: str, *changes: bool) -> dict[str, Any]:
    disks = {f"d{i}": {"backend": "x", "changes_device": c} for i, c in enumerate(changes)}
    return {"requested": requested, "state": state, "disks": disks}


def test_the_write_cache_scope() -> None:
    assert validity.write_cache_setting(_cache("off", "off", True)) == "off"
    assert validity.write_cache_setting(_cache("off", "off", True, False)) == "kernel-off"
    assert validity.write_cache_setting(_cache("unchanged", "on", False)) == "kernel-on"
    assert validity.write_cache_setting(_cache("off", "mixed", True)) is None
    assert validity.write_cache_setting({"state": "off"}) is None
    assert validity.write_cache_setting(None) is None
    # An agent too old to say whether its backend changes the device: kernel-only.
    assert validity.write_cache_setting({"state": "on", "disks": {"sda": {}}}) == "kernel-on"
    sentence = validity.kernel_only_change(_cache("off", "off", True, False))
    assert sentence == (
        "write_cache=off changed only the kernel's view of d1 "
        "(kernel flushes off; device cache unchanged)"
    )
    assert validity.kernel_only_change(_cache("unchanged", "off", False)) == ""
    assert validity.kernel_only_change(_cache("on", "on", True)) == ""


def test_variation_needs_both_a_large_spread_and_an_imprecise_median() -> None:
    assert validity.variation(n=30, mean=10.0, stddev=0.5, ci_half_width_percent=1.0) == ""
    # A latency distribution: CV 100%, but 4,000 samples pin the median within 3%.
    assert validity.variation(n=4000, mean=10.0, stddev=10.0, ci_half_width_percent=3.0) == ""
    wide = validity.variation(n=30, mean=10.0, stddev=2.0, ci_half_width_percent=8.0)
    assert (
        wide
        == "coefficient of variation 20.0% (above 10%), and the 95% interval of the median is ±8.0%"
    )
    few = validity.variation(n=5, mean=10.0, stddev=2.0, ci_half_width_percent=None)
    assert few.endswith("5 samples are too few for a 95% interval of the median")
    assert validity.variation(n=5, mean=0.0, stddev=2.0, ci_half_width_percent=None) == ""
    assert validity.too_few(4) == "" and validity.too_few(1).startswith("1 sample:")


def test_noisy_names_the_loads() -> None:
    env = {"hygiene": {"noisy": True, "before": {"loadavg_1m": 2.5}, "noisy_threshold": 1.0}}
    assert validity.noisy(env) == (
        "the machine was busy around the run: 1-minute load 2.5 before against the threshold 1"
    )
    assert validity.noisy({"hygiene": {"noisy": False}}) == ""


def test_identity_differences_name_each_field() -> None:
    a = {"kernel": {"release": "6.1"}, "cpu": {"model": "X"}}
    b = {"kernel": {"release": "6.12"}, "cpu": {"model": "X"}}
    assert identity_differences(a, b) == ["kernel.release ('6.1' against '6.12')"]
    assert identity_differences(a, a) == []


SUITE: dict[str, Any] = {
    "name": "x",
    "programs": ["a"],
    "profiles": {
        "quick": ["--quick"],
        "precise": {"args": ["--quick"], "repeat_until": {"median_ci_percent": 1.5, "max_runs": 8}},
    },
}


def test_a_profile_may_declare_adaptive_repetition() -> None:
    suite = parse_suite(SUITE, source=Path("x.json"))
    assert suite.profiles == {"quick": ("--quick",), "precise": ("--quick",)}
    assert suite.repeat["precise"].median_ci_percent == 1.5
    assert suite.repeat["precise"].max_runs == 8 and "quick" not in suite.repeat


@pytest.mark.parametrize(
    ("rule", "why"),
    [
        ({"median_ci_percent": 0, "max_runs": 8}, "less than or equal to the minimum of 0"),
        ({"median_ci_percent": 2, "max_runs": 1}, "less than the minimum of 2"),
        ({"median_ci_percent": 2}, "'max_runs' is a required property"),
        ({"median_ci_percent": 2, "max_runs": 8, "min_runs": 2}, "Additional properties"),
    ],
)
def test_a_bad_repetition_rule_is_refused(rule: dict[str, Any], why: str) -> None:
    bad = copy.deepcopy(SUITE)
    bad["profiles"]["precise"]["repeat_until"] = rule
    with pytest.raises(SuiteError, match="x.json: at profiles/precise/repeat_until") as refused:
        parse_suite(bad, source=Path("x.json"))
    assert why in str(refused.value) and "Adaptive repetition" in str(refused.value)


def test_a_profile_may_keep_the_best_of_several_runs() -> None:
    declaration = copy.deepcopy(SUITE)
    declaration["profiles"]["watch"] = {"args": ["--quick"], "best_of": {"runs": 3}}
    suite = parse_suite(declaration, source=Path("x.json"))
    assert suite.profiles["watch"] == ("--quick",)
    assert suite.best_of == {"watch": BestOf(runs=3, gap_s=0.0)}, "back to back by default"
    assert "watch" not in suite.repeat and "precise" not in suite.best_of


def test_the_runs_of_a_best_of_rule_may_be_spaced() -> None:
    declaration = copy.deepcopy(SUITE)
    declaration["profiles"]["watch"] = {"args": [], "best_of": {"runs": 3, "gap_s": 12.5}}
    assert parse_suite(declaration, source=Path("x.json")).best_of["watch"].gap_s == 12.5


BEST_OF_RULE = "Best of several runs"
GAP_RULE = "Seconds between the end of one run"


@pytest.mark.parametrize(
    ("rule", "why", "rule_quoted"),
    [
        ({"runs": 1}, "less than the minimum of 2", BEST_OF_RULE),
        ({"runs": 11}, "greater than the maximum of 10", BEST_OF_RULE),
        ({"runs": "3"}, "is not of type 'integer'", BEST_OF_RULE),
        ({}, "'runs' is a required property", BEST_OF_RULE),
        ({"runs": 3, "pause": 10}, "Additional properties are not allowed", BEST_OF_RULE),
        ({"runs": 3, "gap_s": -1}, "less than the minimum of 0", GAP_RULE),
        ({"runs": 3, "gap_s": 301}, "greater than the maximum of 300", GAP_RULE),
        ({"runs": 3, "gap_s": "10"}, "is not of type 'number'", GAP_RULE),
    ],
)
def test_a_bad_best_of_rule_is_refused(rule: dict[str, Any], why: str, rule_quoted: str) -> None:
    bad = copy.deepcopy(SUITE)
    bad["profiles"]["watch"] = {"args": [], "best_of": rule}
    with pytest.raises(SuiteError, match="x.json: at profiles/watch/best_of") as refused:
        parse_suite(bad, source=Path("x.json"))
    assert why in str(refused.value) and rule_quoted in str(refused.value)


def test_a_profile_takes_one_repetition_rule_not_two() -> None:
    bad = copy.deepcopy(SUITE)
    bad["profiles"]["watch"] = {
        "args": [],
        "best_of": {"runs": 3},
        "repeat_until": {"median_ci_percent": 2, "max_runs": 8},
    }
    with pytest.raises(SuiteError, match="x.json: at profiles/watch"):
        parse_suite(bad, source=Path("x.json"))
