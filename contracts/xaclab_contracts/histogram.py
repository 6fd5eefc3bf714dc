"""The histogram of the result format, scheme ``log2-128`` (docs/result-format.md, "Histograms").

The bucket of a finite double ``x`` is the top 19 bits of ``|x|``'s IEEE 754
pattern after the sign (``bits >> 45``: 11 exponent bits and 7 fraction
bits), mirrored as ``-1 - k`` for negative ``x``; the C writer
(libxac/bench/common/histogram.c) computes the same integers.

:func:`check_histogram` checks what the JSON schema cannot (indices strictly
increasing, counts adding up to ``count``, min and max in the first and last
bucket, the sums within what min and max allow) and raises
:class:`HistogramError` naming the path below ``histogram``.  The agent runs
it on every line a program prints, so a bad line is reported on the machine;
the server runs it on every upload before it builds its numpy form.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SCHEME = "log2-128"
SUB_BITS = 7
SHIFT = 52 - SUB_BITS
INDEX_MIN = -262016
INDEX_MAX = 262015
MAX_BUCKETS = 65536
RAW_MAX = 100_000
MAX_COUNT = 2**53 - 1


class HistogramError(ValueError):
    """A histogram the format refuses; ``where`` is the path below ``histogram``."""

    def __init__(self, message: str, *where: str) -> None:
        super().__init__(message)
        self.where = where


@dataclass(frozen=True, slots=True)
class CheckedHistogram:
    count: int
    min: float
    max: float
    sum: float
    sum_squares: float
    index: list[int]  # non-empty buckets, strictly increasing
    counts: list[int]  # each >= 1, adding up to count


def bucket_index(x: float) -> int:
    """The bucket of one finite value; -0.0 counts as 0.0."""
    (bits,) = struct.unpack("<Q", struct.pack("<d", abs(x)))
    k = int(bits >> SHIFT)
    return -1 - k if x < 0 else k


def check_histogram(raw: Mapping[str, Any]) -> CheckedHistogram:
    """A histogram whose fields the schema has checked, checked for consistency."""
    count = _integer(raw["count"], "count")
    low, high = float(raw["min"]), float(raw["max"])
    total, squares = float(raw["sum"]), float(raw["sum_squares"])
    index, counts = _buckets(raw["buckets"])
    if low > high:
        raise HistogramError(f"min {low!r} is greater than max {high!r}", "min")
    added = sum(counts)
    if added != count:
        raise HistogramError(f"the bucket counts add up to {added}, not {count}", "count")
    for value, name, bucket, which in (
        (low, "min", index[0], "first"),
        (high, "max", index[-1], "last"),
    ):
        found = bucket_index(value)
        if found != bucket:
            raise HistogramError(
                f"{name} {value!r} is in bucket {found}, not in the {which} bucket {bucket}", name
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
    return CheckedHistogram(count, low, high, total, squares, index, counts)


def _integer(value: Any, *where: str) -> int:
    """An integer as JSON Schema means it (2 and 2.0, not True)."""
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer():
        return int(value)
    raise HistogramError(f"{value!r} is not of type 'integer'", *where)


def _buckets(buckets: list[Any]) -> tuple[list[int], list[int]]:
    """The pairs' indices and counts; whole-list checks first, positions only on failure."""
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
    index = [pair[0] for pair in buckets]
    counts = [pair[1] for pair in buckets]
    if not set(map(type, index)) | set(map(type, counts)) <= {int}:
        converted = [
            [_integer(v, "buckets", str(i), str(column)) for column, v in enumerate(pair)]
            for i, pair in enumerate(buckets)
        ]
        index = [pair[0] for pair in converted]
        counts = [pair[1] for pair in converted]
    if min(index) < INDEX_MIN or max(index) > INDEX_MAX:
        at = next(i for i, v in enumerate(index) if not INDEX_MIN <= v <= INDEX_MAX)
        raise HistogramError(
            f"bucket index {index[at]} is outside [{INDEX_MIN}, {INDEX_MAX}]",
            "buckets",
            str(at),
            "0",
        )
    if min(counts) < 1 or max(counts) > MAX_COUNT:
        at = next(i for i, v in enumerate(counts) if not 1 <= v <= MAX_COUNT)
        raise HistogramError(
            f"bucket count {counts[at]} is outside [1, {MAX_COUNT}]", "buckets", str(at), "1"
        )
    if not all(a < b for a, b in zip(index, index[1:], strict=False)):
        at = next(i for i in range(1, len(index)) if index[i] <= index[i - 1])
        raise HistogramError(
            f"bucket indices must increase strictly: {index[at]} follows {index[at - 1]}",
            "buckets",
            str(at),
            "0",
        )
    return index, counts
