"""How precisely a median is known, and what change it lets a comparison detect.

The one definition the agent (deciding when to stop repeating) and the server
(recording each result's interval) share; docs/validity.md explains the choices.

- **The 95% interval of the median** is distribution-free: the order
  statistics ``x(k)`` and ``x(n+1-k)`` with ``k`` the largest rank for which
  ``P(B < k) <= 0.025``, ``B ~ Binomial(n, 1/2)`` (so the interval covers the
  true median with probability at least 95%).  Below :data:`MIN_INTERVAL_SAMPLES`
  samples no such ``k`` exists: even [min, max] covers it with less than 95%.
  Above :data:`EXACT_MAX_N` the ranks come from the normal approximation
  ``k = floor((n - 1.96 sqrt(n)) / 2)``, which differs from the exact rank by
  at most one there.
- **Its relative half-width**, in percent: ``(high - low) / 2 / |median| * 100``;
  undefined for a median of 0.
- **The minimum detectable effect** of comparing two such medians: the change
  a two-sided test at α = 0.05 finds with 80% power, ``(z(0.975) + z(0.8)) /
  z(0.975) * sqrt(ha² + hb²)`` with ``ha``, ``hb`` the sides' relative
  half-widths (each half-width is 1.96 standard errors).  For one series
  compared with another run as precise as itself, that is ``2.02 × h``.
"""

from __future__ import annotations

import math

CONFIDENCE = 0.95
MIN_INTERVAL_SAMPLES = 6  # P(B = 0) for n = 6 is 1/64 <= 0.025; for n = 5 it is 1/32
EXACT_MAX_N = 1000
Z_TWO_SIDED = 1.959963984540054  # z(0.975)
Z_POWER = 0.8416212335729143  # z(0.8): 80% power
MDE_FACTOR = (Z_TWO_SIDED + Z_POWER) / Z_TWO_SIDED


def median_interval_ranks(n: int) -> tuple[int, int] | None:
    """The 1-based ranks (low, high) of the 95% interval of the median of ``n`` values.

    None when ``n`` is below :data:`MIN_INTERVAL_SAMPLES`.
    """
    if n < MIN_INTERVAL_SAMPLES:
        return None
    tail = (1 - CONFIDENCE) / 2
    if n > EXACT_MAX_N:
        k = max(1, math.floor((n - Z_TWO_SIDED * math.sqrt(n)) / 2))
        return k, n + 1 - k
    total = 2**n
    below = 0  # P(B <= k - 1) * 2^n, as an exact integer
    k = 0
    while True:
        below_next = below + math.comb(n, k)
        if below_next / total > tail:
            break
        below = below_next
        k += 1
    return k, n + 1 - k


def median_interval(ordered: list[float]) -> tuple[float, float] | None:
    """The 95% interval of the median of already sorted values, or None (too few)."""
    ranks = median_interval_ranks(len(ordered))
    if ranks is None:
        return None
    return ordered[ranks[0] - 1], ordered[ranks[1] - 1]


def half_width_percent(low: float, high: float, median: float) -> float | None:
    """The interval's half-width relative to the median, in percent; None for a zero median."""
    if median == 0 or not all(map(math.isfinite, (low, high, median))):
        return None
    return (high - low) / 2 / abs(median) * 100


def detectable_percent(*half_widths: float | None) -> float | None:
    """The minimum detectable effect (percent) of comparing medians this precise.

    One half-width: the series against another run as precise as itself.
    Two: the two sides of a pair.  None when a side's precision is unknown.
    """
    if not half_widths or any(h is None for h in half_widths):
        return None
    known = [h for h in half_widths if h is not None]
    if len(known) == 1:
        known = known * 2
    return MDE_FACTOR * math.sqrt(sum(h * h for h in known))
