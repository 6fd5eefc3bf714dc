"""The mergeable histogram of the result format, scheme ``log2-128`` (docs/result-format.md).

A result with more than :data:`RAW_MAX` samples carries a histogram instead of
them.  The bucket of a finite double ``x`` is the top 19 bits of ``|x|``'s
IEEE 754 pattern after the sign (``bits >> 45``: 11 exponent bits and 7
fraction bits, 128 equal buckets per power of two), mirrored as ``-1 - k``
for negative ``x``; the C writer (libxac/bench/common/histogram.c) computes
the same integers.  Fixed boundaries make histograms merge by adding counts
(:func:`merge`).

A bucket's midpoint is within :data:`BOUND` (2^-8) of every normal value in
it, so :meth:`Histogram.value_at_rank` (the midpoint of the bucket holding a
rank, clamped to [min, max]; rank 1 is min and rank n is max exactly) is a
nearest-rank quantile within 0.39 %.

:func:`parse` is :func:`xaclab_contracts.histogram.check_histogram` (what the JSON
schema cannot check, the same check the agent makes), then this numpy form.
"""

import math
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt
from xaclab_contracts.histogram import (
    INDEX_MAX,
    INDEX_MIN,
    MAX_BUCKETS,
    MAX_COUNT,
    RAW_MAX,
    SCHEME,
    SHIFT,
    CheckedHistogram,
    HistogramError,
    check_histogram,
)

__all__ = [
    "BOUND",
    "INDEX_MAX",
    "INDEX_MIN",
    "MAX_BUCKETS",
    "MAX_COUNT",
    "RAW_MAX",
    "SCHEME",
    "Histogram",
    "HistogramError",
    "bucket_high",
    "bucket_index",
    "bucket_low",
    "bucket_mid",
    "exact_sum_squares",
    "from_checked",
    "from_samples",
    "merge",
    "pack",
    "parse",
    "unpack",
]

BOUND = 2.0**-8

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

# Stored form (results.histogram): this header, then the indices as
# little-endian int32, then the counts as little-endian int64.
_HEADER = struct.Struct("<8sQddddI")
# Dekker's product is exact for squares of magnitudes in this range.
_DEKKER_LOW = 2.0**-480
_DEKKER_HIGH = 2.0**480


@dataclass(frozen=True, slots=True, eq=False)
class Histogram:
    count: int
    min: float
    max: float
    sum: float
    sum_squares: float
    index: IntArray  # non-empty buckets, strictly increasing
    counts: IntArray  # each >= 1, adding up to count

    @property
    def mean(self) -> float:
        """Exact: the same number the raw samples give."""
        return self.sum / self.count

    def median(self) -> float:
        """As for raw samples: the middle rank, or the mean of the two middle ranks."""
        n = self.count
        if n % 2:
            return self.value_at_rank(n // 2 + 1)
        return (self.value_at_rank(n // 2) + self.value_at_rank(n // 2 + 1)) / 2

    def value_at_rank(self, rank: int) -> float:
        """The value of nearest rank ``rank`` (1 … count), within :data:`BOUND` of the true one."""
        if not 1 <= rank <= self.count:
            raise ValueError(f"rank {rank} is outside 1 … {self.count}")
        if rank == 1:
            return self.min
        if rank == self.count:
            return self.max
        at = int(np.searchsorted(np.cumsum(self.counts), rank))
        return self._clamp(float(bucket_mid(self.index[at : at + 1])[0]))

    def representatives(self) -> FloatArray:
        """Each non-empty bucket's midpoint, clamped to [min, max]."""
        with np.errstate(over="ignore"):
            return np.clip(bucket_mid(self.index), self.min, self.max)

    def to_json(self) -> dict[str, Any]:
        return {
            "scheme": SCHEME,
            "count": self.count,
            "min": self.min,
            "max": self.max,
            "sum": self.sum,
            "sum_squares": self.sum_squares,
            "buckets": np.column_stack([self.index, self.counts]).tolist(),
        }

    def same_as(self, other: "Histogram") -> bool:
        return (
            (self.count, self.min, self.max, self.sum, self.sum_squares)
            == (other.count, other.min, other.max, other.sum, other.sum_squares)
            and np.array_equal(self.index, other.index)
            and np.array_equal(self.counts, other.counts)
        )

    def _clamp(self, value: float) -> float:
        return min(max(value, self.min), self.max)


def bucket_index(values: Sequence[float] | FloatArray) -> IntArray:
    """The bucket of each finite value; -0.0 counts as 0.0."""
    x = np.asarray(values, dtype=np.float64)
    magnitude = (np.abs(x).view(np.uint64) >> np.uint64(SHIFT)).astype(np.int64)
    return np.where(x < 0, -1 - magnitude, magnitude)


def bucket_low(index: IntArray) -> FloatArray:
    """The bound of each bucket nearest minus infinity (inclusive for buckets >= 0)."""
    index = np.asarray(index, dtype=np.int64)
    return np.where(index >= 0, _from_bits(index), -_from_bits(-index))


def bucket_high(index: IntArray) -> FloatArray:
    """The bound of each bucket nearest plus infinity; +inf for the top bucket."""
    index = np.asarray(index, dtype=np.int64)
    return np.where(index >= 0, _from_bits(index + 1), -_from_bits(-1 - index))


def bucket_mid(index: IntArray) -> FloatArray:
    """Each bucket's midpoint (infinite for the top and bottom buckets)."""
    index = np.asarray(index, dtype=np.int64)
    magnitude = np.where(index >= 0, index, -1 - index)
    low, high = _from_bits(magnitude), _from_bits(magnitude + 1)
    with np.errstate(invalid="ignore", over="ignore"):
        mid = low + (high - low) / 2
    return np.where(index >= 0, mid, -mid)


def _from_bits(magnitude: IntArray) -> FloatArray:
    return (np.asarray(magnitude, dtype=np.int64).astype(np.uint64) << np.uint64(SHIFT)).view(
        np.float64
    )


def from_samples(samples: Sequence[float] | FloatArray) -> Histogram:
    """The histogram of finite raw samples (exact count, min, max and exactly rounded sums)."""
    x = np.asarray(samples, dtype=np.float64)
    if x.size == 0:
        raise ValueError("no samples")
    index, counts = np.unique(bucket_index(x), return_counts=True)
    return Histogram(
        count=int(x.size),
        min=float(x.min()),
        max=float(x.max()),
        sum=math.fsum(x.tolist()),
        sum_squares=exact_sum_squares(x),
        index=index.astype(np.int64),
        counts=counts.astype(np.int64),
    )


def exact_sum_squares(x: FloatArray) -> float:
    """The exactly rounded sum of the squares (+inf if it overflows)."""
    magnitude = np.abs(x)
    nonzero = magnitude[magnitude != 0]
    if nonzero.size == 0:
        return 0.0
    if float(nonzero.max()) < _DEKKER_HIGH and float(nonzero.min()) > _DEKKER_LOW:
        # Dekker's two-product: x*x == square + error exactly.
        split = 134217729.0 * x  # 2^27 + 1 (Veltkamp)
        high = split - (split - x)
        low = x - high
        square = x * x
        error = ((high * high - square) + 2 * high * low) + low * low
        return math.fsum(np.concatenate([square, error]).tolist())
    exact = sum((Fraction(v) ** 2 for v in x.tolist()), Fraction(0))
    try:
        return float(exact)
    except OverflowError:
        return math.inf


def merge(histograms: Iterable[Histogram]) -> Histogram:
    """One histogram of all: counts, min and max exactly; each sum the exactly rounded sum
    of the parts' sums (so the result does not depend on the order of the parts)."""
    parts = list(histograms)
    if not parts:
        raise ValueError("nothing to merge")
    if len(parts) == 1:
        return parts[0]
    index, where = np.unique(np.concatenate([p.index for p in parts]), return_inverse=True)
    counts = np.zeros(len(index), dtype=np.int64)
    np.add.at(counts, where, np.concatenate([p.counts for p in parts]))
    return Histogram(
        count=sum(p.count for p in parts),
        min=min(p.min for p in parts),
        max=max(p.max for p in parts),
        sum=math.fsum(p.sum for p in parts),
        sum_squares=math.fsum(p.sum_squares for p in parts),
        index=index.astype(np.int64),
        counts=counts,
    )


def parse(raw: dict[str, Any]) -> Histogram:
    """A histogram whose fields the schema has checked, checked for consistency."""
    return from_checked(check_histogram(raw))


def from_checked(checked: CheckedHistogram) -> Histogram:
    return Histogram(
        checked.count,
        checked.min,
        checked.max,
        checked.sum,
        checked.sum_squares,
        np.array(checked.index, dtype=np.int64),
        np.array(checked.counts, dtype=np.int64),
    )


def pack(histogram: Histogram) -> bytes:
    """The stored form: a header (scheme, count, min, max, sum, sum_squares, buckets), then
    the indices as little-endian int32 and the counts as little-endian int64."""
    header = _HEADER.pack(
        SCHEME.encode("ascii"),
        histogram.count,
        histogram.min,
        histogram.max,
        histogram.sum,
        histogram.sum_squares,
        len(histogram.index),
    )
    return (
        header
        + np.asarray(histogram.index, dtype="<i4").tobytes()
        + np.asarray(histogram.counts, dtype="<i8").tobytes()
    )


def unpack(data: bytes) -> Histogram:
    if len(data) < _HEADER.size:
        raise ValueError("a stored histogram is shorter than its header")
    scheme, count, low, high, total, squares, buckets = _HEADER.unpack_from(data)
    if scheme != SCHEME.encode("ascii") or len(data) != _HEADER.size + 12 * buckets:
        raise ValueError("not a stored log2-128 histogram")
    index = np.frombuffer(data, dtype="<i4", count=buckets, offset=_HEADER.size)
    counts = np.frombuffer(data, dtype="<i8", count=buckets, offset=_HEADER.size + 4 * buckets)
    return Histogram(
        count, low, high, total, squares, index.astype(np.int64), counts.astype(np.int64)
    )
