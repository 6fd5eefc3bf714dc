"""Summary statistics the server computes from raw samples.

The server never stores a client's summary numbers (docs/result-format.md);
these functions are the single definition of each one.
"""

import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Summary:
    n: int
    mean: float
    median: float
    min: float
    max: float
    stddev: float | None  # sample standard deviation (n-1); None for a single sample
    p99: float  # nearest rank


def summarize(samples: Sequence[float]) -> Summary:
    """Summarise finite samples; refuse an empty or non-finite sequence with ValueError."""
    if not samples:
        raise ValueError("no samples")
    values = [float(s) for s in samples]
    if not all(math.isfinite(v) for v in values):
        raise ValueError("samples must be finite numbers")
    ordered = sorted(values)
    n = len(ordered)
    mean = math.fsum(ordered) / n
    stddev = None
    if n > 1:
        stddev = math.sqrt(math.fsum((v - mean) ** 2 for v in ordered) / (n - 1))
    return Summary(
        n=n,
        mean=mean,
        median=median(ordered),
        min=ordered[0],
        max=ordered[-1],
        stddev=stddev,
        p99=nearest_rank(ordered, 99),
    )


def median(ordered: Sequence[float]) -> float:
    """Median of already sorted values: the mean of the two middle ones when n is even."""
    n = len(ordered)
    mid = n // 2
    if n % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def nearest_rank(ordered: Sequence[float], percent: float) -> float:
    """The nearest-rank percentile of already sorted values: the value at rank ceil(p/100·n)."""
    if not 0 < percent <= 100:
        raise ValueError("percent must be in (0, 100]")
    # percent * n before the division keeps integer inputs exact (0.99 * n is not).
    rank = math.ceil(percent * len(ordered) / 100)
    return ordered[max(rank, 1) - 1]


def pack_samples(samples: Sequence[float]) -> bytes:
    """Raw samples as little-endian float64, the storage format of results.samples."""
    return struct.pack(f"<{len(samples)}d", *samples)


def unpack_samples(data: bytes) -> list[float]:
    if len(data) % 8:
        raise ValueError("packed samples must be a multiple of 8 bytes")
    return list(struct.unpack(f"<{len(data) // 8}d", data))
