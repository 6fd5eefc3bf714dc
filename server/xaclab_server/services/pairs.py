"""One pair of a comparison: two groups of results with the same key, measured against each other.

:func:`measure` gives ``stat(B) / stat(A)`` with a seeded bootstrap interval, a
Mann–Whitney U test (:mod:`.significance`), each side's validity flags, the
95% interval of each side's median and the minimum detectable effect at that
precision (:mod:`xaclab_contracts.precision`).  Results are immutable, so a
pair is cached by its results' ids and storage times (and whether they were
judged yet).  The
q-value and the verdict are the comparison's to set (:mod:`.verdicts`): they
depend on every pair of it.

Several results for one key pool their samples.  When a result of a pair
carries a histogram (more than 100,000 samples), every result of both sides is
merged into one histogram per side (raw samples put into the same buckets),
and the pair is ``binned``: its statistics, bootstrap and U test use the
bucket representatives, values in one bucket counting as ties
(docs/server.md, "Comparisons").
"""

import json
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from xaclab_contracts.precision import detectable_percent, half_width_percent

from xaclab_server.models import Result
from xaclab_server.services import histogram, significance
from xaclab_server.services.histogram import Histogram
from xaclab_server.services.validity import NOT_JUDGED, median_interval

CACHE_SIZE = 4096
NOT_JUDGED_FLAG = "not_judged"
Statistic = Literal["median", "mean"]


@dataclass(frozen=True, slots=True)
class Row:
    """A result with the params it is matched on (its own plus its job's factors)."""

    result: Result
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Pair:
    suite: str
    benchmark: str
    metric: str
    unit: str
    better: str
    sut: str
    params: dict[str, Any]
    n_a: int
    n_b: int
    stat_a: float
    stat_b: float
    ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    test: str
    significant: bool
    verdict: str
    binned: bool  # compared on histogram buckets, not raw samples
    flags_a: dict[str, str] = field(default_factory=dict)
    flags_b: dict[str, str] = field(default_factory=dict)
    median_ci_a: float | None = None  # half-width of the 95% interval of A's median, in %
    median_ci_b: float | None = None
    detectable: float | None = None  # minimum detectable effect, in %
    where_a: str = ""  # machine and epoch
    where_b: str = ""
    fingerprint_differences: list[str] = field(default_factory=list)
    q_value: float = math.nan
    in_doubt: bool = False


_cache: "OrderedDict[tuple[Any, ...], Pair]" = OrderedDict()
_cache_lock = threading.Lock()


def canonical(params: dict[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


def side_flags(rows: list[Row]) -> dict[str, str]:
    """Every flag raised on a side's results (the first sentence of each), or not judged."""
    flags: dict[str, str] = {}
    for row in rows:
        found = row.result.flags
        if found is None:
            flags.setdefault(NOT_JUDGED_FLAG, NOT_JUDGED)
            continue
        for name, why in found.items():
            flags.setdefault(name, str(why))
    return flags


def _samples(rows: list[Row]) -> np.ndarray[Any, np.dtype[np.float64]]:
    # Several results for one key (a resent or repeated measurement) pool their samples.
    return np.concatenate([np.frombuffer(r.result.samples, dtype="<f8") for r in rows])


def _histogram(rows: list[Row]) -> Histogram:
    """The side's results merged into one histogram; raw samples go into the same buckets."""
    parts = []
    for row in rows:
        stored = row.result.histogram
        if stored is not None:
            parts.append(histogram.unpack(stored))
        else:
            parts.append(histogram.from_samples(np.frombuffer(row.result.samples, dtype="<f8")))
    return histogram.merge(parts)


def _precision(group: significance.Group) -> float | None:
    measured = group if isinstance(group, Histogram) else np.asarray(group, dtype=np.float64)
    interval = median_interval(measured)
    if interval is None:
        return None
    return half_width_percent(*interval, significance.group_statistic(group, "median"))


def measure(rows_a: list[Row], rows_b: list[Row], statistic: Statistic) -> Pair:
    # The time a result was stored with its id: SQLite hands a deleted row's id out again.
    cache_key = (
        tuple((r.result.id, r.result.created_at, r.result.flags is None) for r in rows_a),
        tuple((r.result.id, r.result.created_at, r.result.flags is None) for r in rows_b),
        statistic,
        canonical(rows_a[0].params),
    )
    with _cache_lock:
        cached = _cache.get(cache_key)
        if cached is not None:
            _cache.move_to_end(cache_key)
            return cached
    binned = any(r.result.histogram is not None for r in (*rows_a, *rows_b))
    xa: significance.Group
    xb: significance.Group
    if binned:
        ha, hb = _histogram(rows_a), _histogram(rows_b)
        xa, xb, n_a, n_b = ha, hb, ha.count, hb.count
        test = significance.mann_whitney_u_binned(ha, hb)
    else:
        xa, xb = _samples(rows_a), _samples(rows_b)
        n_a, n_b = len(xa), len(xb)
        test = significance.mann_whitney_u(xa, xb)
    first = rows_a[0].result
    second_sut = rows_b[0].result.sut
    interval = significance.bootstrap_ratio(xa, xb, statistic=statistic)
    precision_a, precision_b = _precision(xa), _precision(xb)
    pair = Pair(
        suite=first.suite,
        benchmark=first.benchmark,
        metric=first.metric,
        unit=first.unit,
        better=first.better,
        sut=first.sut if first.sut == second_sut else f"{first.sut}/{second_sut}",
        params=rows_a[0].params,
        n_a=n_a,
        n_b=n_b,
        stat_a=significance.group_statistic(xa, statistic),
        stat_b=significance.group_statistic(xb, statistic),
        ratio=interval.ratio,
        ci_low=interval.low,
        ci_high=interval.high,
        p_value=test.p,
        test=test.method,
        significant=False,
        verdict="",
        binned=binned,
        flags_a=side_flags(rows_a),
        flags_b=side_flags(rows_b),
        median_ci_a=precision_a,
        median_ci_b=precision_b,
        detectable=detectable_percent(precision_a, precision_b),
    )
    with _cache_lock:
        _cache[cache_key] = pair
        if len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return pair
