"""A latency distribution as the thesis and fio print it: percentiles and the most expensive.

From a result's raw samples, or from its histogram when it carries one
(more than 100,000 samples; a bucket's values are its midpoint, within
0.39 %).  Percentiles are nearest-rank, p50 … p99.9 and the maximum; a
percentile is left out when the result has too few samples for it to
differ from the maximum (p99.9 needs 1,000).  The k-th most expensive
(thesis figure 5-3) is the k-th largest sample, k = 1 … :data:`TOP_K`.
"""

import math
from dataclasses import dataclass

import numpy as np

from xaclab_server.models import Result
from xaclab_server.services import histogram

PERCENTILES = (50.0, 90.0, 99.0, 99.9)
TOP_K = 1000
# A result with at least this many samples is a distribution worth drawing as one.
MIN_SAMPLES = 100


@dataclass(frozen=True, slots=True)
class Distribution:
    n: int
    percentiles: list[tuple[float, float]]  # (percent, value); 100.0 is the maximum
    top: list[float]  # the largest value first


def percentile_label(percent: float) -> str:
    return "max" if percent >= 100 else f"p{percent:g}"


def nines(percent: float, n: int) -> float:
    """Where a percentile sits on a 'nines' axis: p50 at 0.3, p90 at 1, p99 at 2, p99.9 at 3;
    the maximum one step beyond the finest percentile the samples resolve (log10 n)."""
    if percent >= 100:
        return math.log10(max(n, 10))
    return -math.log10(1 - percent / 100)


def distribution(result: Result) -> Distribution:
    stored = result.histogram
    if stored is not None:
        hist = histogram.unpack(stored)
        n = hist.count
        points = [
            (p, hist.value_at_rank(max(math.ceil(p * n / 100), 1)))
            for p in PERCENTILES
            if _fits(p, n)
        ]
        top: list[float] = []
        for index, count in zip(hist.index[::-1], hist.counts[::-1], strict=True):
            value = min(max(float(histogram.bucket_mid(np.array([index]))[0]), hist.min), hist.max)
            top.extend([value] * min(int(count), TOP_K - len(top)))
            if len(top) >= TOP_K:
                break
        if top:
            top[0] = hist.max
        return Distribution(n, [*points, (100.0, hist.max)], top)
    ordered = np.sort(np.frombuffer(result.samples, dtype="<f8"))
    n = len(ordered)
    points = [
        (p, float(ordered[max(math.ceil(p * n / 100), 1) - 1])) for p in PERCENTILES if _fits(p, n)
    ]
    return Distribution(n, [*points, (100.0, float(ordered[-1]))], ordered[::-1][:TOP_K].tolist())


def _fits(percent: float, n: int) -> bool:
    """A percentile the samples can tell from the maximum: at least one sample lies above it."""
    return n * (1 - percent / 100) >= 1
