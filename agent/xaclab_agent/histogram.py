"""What the schema cannot say about a result's histogram (docs/result-format.md, "Histograms").

The schema checks each field's type and range; :func:`check_histogram` checks
that they agree: bucket indices strictly increasing, counts adding up to
``count``, ``min`` and ``max`` finite, in order and in the first and last
bucket, and the sums within what ``min`` and ``max`` allow.  The server makes
the same checks; the agent makes them so that a program's bad line is
reported on the machine, in the job's log, instead of failing the upload.
"""

from __future__ import annotations

import math
import struct
from typing import Any

from xaclab_agent.errors import ResultError

# index(x) = the top 19 bits of |x|'s IEEE 754 pattern after the sign, mirrored below 0.
SHIFT = 45


def bucket_index(x: float) -> int:
    (bits,) = struct.unpack("<Q", struct.pack("<d", abs(x)))
    k = int(bits >> SHIFT)
    return -1 - k if x < 0 else k


def check_histogram(histogram: dict[str, Any]) -> None:
    """Raise ResultError unless a schema-valid histogram is consistent."""
    for key in ("min", "max", "sum", "sum_squares"):
        try:
            finite = math.isfinite(histogram[key])
        except OverflowError:  # an integer beyond any double
            finite = False
        if not finite:
            raise ResultError(f"histogram/{key} is not a finite number")
    count, low, high = int(histogram["count"]), histogram["min"], histogram["max"]
    buckets = histogram["buckets"]
    indices = [int(i) for i, _ in buckets]
    for position in range(1, len(indices)):
        if indices[position] <= indices[position - 1]:
            raise ResultError(
                f"histogram/buckets/{position}: bucket indices must increase strictly "
                f"({indices[position]} follows {indices[position - 1]})"
            )
    added = sum(int(c) for _, c in buckets)
    if added != count:
        raise ResultError(f"histogram/count: the bucket counts add up to {added}, not {count}")
    if low > high:
        raise ResultError(f"histogram/min: min {low!r} is greater than max {high!r}")
    if bucket_index(low) != indices[0] or bucket_index(high) != indices[-1]:
        raise ResultError("histogram: min and max must lie in the first and last bucket")
    if not count * low <= histogram["sum"] <= count * high:
        raise ResultError("histogram/sum: sum is outside count × min … count × max")
    if histogram["sum_squares"] > count * max(low * low, high * high):
        raise ResultError("histogram/sum_squares: more than count × max(min², max²)")
