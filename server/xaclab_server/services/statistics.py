"""Summary statistics the server computes from raw samples, or from a histogram.

The server never stores a client's summary numbers (docs/result-format.md);
these functions are the single definition of each one.  They take a list or
a float64 numpy array; an upload of a million samples is summarised with
numpy, the sums still exactly rounded (``math.fsum``).

From a histogram (:func:`summarize_histogram`): n, min and max are exact; the
mean is ``sum / count``, the same number the raw samples give; the standard
deviation comes from ``sum`` and ``sum_squares`` in exact rational arithmetic
(only the rounding of the two sums is left: an absolute error of about
mean × 1.5e-8; exactly 0 when min equals max);
the median and p99 use the same ranks as for raw samples, each rank's value
read from its bucket (within 2^-8 of the true one, :mod:`.histogram`).
"""

import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from xaclab_server.services.histogram import Histogram

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Summary:
    n: int
    mean: float
    median: float
    min: float
    max: float
    stddev: float | None  # sample standard deviation (n-1); None for a single sample
    p99: float  # nearest rank


def summarize(samples: Sequence[float] | FloatArray) -> Summary:
    """Summarise finite samples; refuse an empty or non-finite sequence with ValueError."""
    values = np.asarray(samples, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError("no samples")
    if not bool(np.isfinite(values).all()):
        raise ValueError("samples must be finite numbers")
    ordered = np.sort(values)
    n = int(ordered.size)
    mean = math.fsum(ordered.tolist()) / n
    stddev = None
    if n > 1:
        deviations = ordered - mean
        stddev = math.sqrt(math.fsum((deviations * deviations).tolist()) / (n - 1))
    return Summary(
        n=n,
        mean=mean,
        median=float(median(ordered)),
        min=float(ordered[0]),
        max=float(ordered[-1]),
        stddev=stddev,
        p99=float(nearest_rank(ordered, 99)),
    )


def summarize_histogram(histogram: Histogram) -> Summary:
    n = histogram.count
    total = Fraction(histogram.sum)
    variance = (Fraction(histogram.sum_squares) - total * total / n) / (n - 1) if n > 1 else None
    if histogram.min == histogram.max and variance is not None:
        # Equal values; the rounded sums would leave a residue of about mean × 1e-8.
        variance = Fraction(0)
    return Summary(
        n=n,
        mean=histogram.mean,
        median=histogram.median(),
        min=histogram.min,
        max=histogram.max,
        # Rounding of the two sums can leave a tiny negative for (nearly) equal values.
        stddev=None if variance is None else math.sqrt(max(float(variance), 0.0)),
        p99=histogram.value_at_rank(max(math.ceil(99 * n / 100), 1)),
    )


def median(ordered: Sequence[float] | FloatArray) -> float:
    """Median of already sorted values: the mean of the two middle ones when n is even."""
    n = len(ordered)
    mid = n // 2
    if n % 2:
        return float(ordered[mid])
    return float((ordered[mid - 1] + ordered[mid]) / 2)


def nearest_rank(ordered: Sequence[float] | FloatArray, percent: float) -> float:
    """The nearest-rank percentile of already sorted values: the value at rank ceil(p/100·n)."""
    if not 0 < percent <= 100:
        raise ValueError("percent must be in (0, 100]")
    # percent * n before the division keeps integer inputs exact (0.99 * n is not).
    rank = math.ceil(percent * len(ordered) / 100)
    return float(ordered[max(rank, 1) - 1])


def pack_samples(samples: Sequence[float] | FloatArray) -> bytes:
    """Raw samples as little-endian float64, the storage format of results.samples."""
    return np.asarray(samples, dtype="<f8").tobytes()


def unpack_samples(data: bytes) -> list[float]:
    if len(data) % 8:
        raise ValueError("packed samples must be a multiple of 8 bytes")
    return list(struct.unpack(f"<{len(data) // 8}d", data))
