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

:func:`parse` checks what the JSON schema cannot (indices strictly
increasing, counts adding up to ``count``, min and max in the first and last
bucket, the sums within what min and max allow) and raises
:class:`HistogramError` naming the path below ``histogram``.
"""

import math
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

SCHEME = "log2-128"
SUB_BITS = 7
SHIFT = 52 - SUB_BITS
INDEX_MIN = -262016
INDEX_MAX = 262015
MAX_BUCKETS = 65536
RAW_MAX = 100_000
MAX_COUNT = 2**53 - 1
BOUND = 2.0**-8

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

# Stored form (results.histogram): this header, then the indices as
# little-endian int32, then the counts as little-endian int64.
_HEADER = struct.Struct("<8sQddddI")
# Dekker's product is exact for squares of magnitudes in this range.
_DEKKER_LOW = 2.0**-480
_DEKKER_HIGH = 2.0**480


class HistogramError(ValueError):
    """A histogram the format refuses; ``where`` is the path below ``histogram``."""

    def __init__(self, message: str, *where: str) -> None:
        super().__init__(message)
        self.where = where


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
    count = _integer(raw["count"], "count")
    low, high = float(raw["min"]), float(raw["max"])
    total, squares = float(raw["sum"]), float(raw["sum_squares"])
    index, counts = _buckets(raw["buckets"])
    if low > high:
        raise HistogramError(f"min {low!r} is greater than max {high!r}", "min")
    added = sum(counts.tolist())
    if added != count:
        raise HistogramError(f"the bucket counts add up to {added}, not {count}", "count")
    if int(bucket_index([low])[0]) != int(index[0]):
        raise HistogramError(
            f"min {low!r} is in bucket {int(bucket_index([low])[0])}, "
            f"not in the first bucket {int(index[0])}",
            "min",
        )
    if int(bucket_index([high])[0]) != int(index[-1]):
        raise HistogramError(
            f"max {high!r} is in bucket {int(bucket_index([high])[0])}, "
            f"not in the last bucket {int(index[-1])}",
            "max",
        )
    # Rounding is monotone, so an exactly rounded sum lies within these bounds.
    if not count * low <= total <= count * high:
        raise HistogramError(
            f"sum {total!r} is outside count × min … count × max "
            f"({count * low!r} … {count * high!r})",
            "sum",
        )
    square_bound = count * max(low * low, high * high)
    if squares > square_bound:
        raise HistogramError(
            f"sum_squares {squares!r} is more than count × max(min², max²) ({square_bound!r})",
            "sum_squares",
        )
    return Histogram(count, low, high, total, squares, index, counts)


def _integer(value: Any, *where: str) -> int:
    """An integer as JSON Schema means it (2 and 2.0, not True)."""
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer():
        return int(value)
    raise HistogramError(f"{value!r} is not of type 'integer'", *where)


def _buckets(buckets: list[Any]) -> tuple[IntArray, IntArray]:
    if not buckets:
        raise HistogramError("[] should be non-empty", "buckets")
    if len(buckets) > MAX_BUCKETS:
        raise HistogramError(
            f"[... {len(buckets)} buckets] is too long (at most {MAX_BUCKETS})", "buckets"
        )
    for position, pair in enumerate(buckets):
        if type(pair) is not list or len(pair) != 2:
            raise HistogramError(
                f"{pair!r} is not an [index, count] pair", "buckets", str(position)
            )
    flat = [value for pair in buckets for value in pair]
    if not set(map(type, flat)) <= {int}:
        flat = [_integer(v, "buckets", str(i // 2), str(i % 2)) for i, v in enumerate(flat)]
    given = flat
    # Anything beyond the counts' range is refused below; clip first so int64 holds it.
    if min(flat) < -MAX_COUNT or max(flat) > MAX_COUNT:
        flat = [max(min(v, MAX_COUNT + 1), -MAX_COUNT - 1) for v in flat]
    pairs = np.array(flat, dtype=np.int64).reshape(-1, 2)
    index, counts = pairs[:, 0], pairs[:, 1]
    _first_bad(
        (index < INDEX_MIN) | (index > INDEX_MAX),
        lambda i: f"bucket index {given[2 * i]} is outside [{INDEX_MIN}, {INDEX_MAX}]",
        "0",
    )
    _first_bad(
        (counts < 1) | (counts > MAX_COUNT),
        lambda i: f"bucket count {given[2 * i + 1]} is outside [1, {MAX_COUNT}]",
        "1",
    )
    _first_bad(
        np.r_[False, index[1:] <= index[:-1]],
        lambda i: (
            f"bucket indices must increase strictly: {int(index[i])} follows {int(index[i - 1])}"
        ),
        "0",
    )
    return index.astype(np.int64), counts.astype(np.int64)


def _first_bad(bad: npt.NDArray[np.bool_], message: Any, column: str) -> None:
    if bool(bad.any()):
        position = int(np.argmax(bad))
        raise HistogramError(message(position), "buckets", str(position), column)


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
