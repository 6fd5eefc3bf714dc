"""Result-format records for the tests: a valid one, and one that carries a histogram."""

from __future__ import annotations

from typing import Any


def result_line(**changes: Any) -> dict[str, Any]:
    """A valid page_touch result; ``changes`` replace its fields."""
    found: dict[str, Any] = {
        "format": "xaclab-result",
        "format_version": 1,
        "suite": "page-touch",
        "benchmark": "page_touch",
        "sut": "libxac",
        "params": {"n": 1, "access": "read", "advisory": False},
        "metric": "time_per_page",
        "unit": "us",
        "better": "lower",
        "samples": [4.1, 4.0, 4.2],
        "library": {"name": "libxac", "version": "0.1.0", "git_revision": "3f2a9c1"},
    }
    found.update(changes)
    return found


def histogram_line(histogram: dict[str, Any] | None = None, **changes: Any) -> dict[str, Any]:
    """100,001 samples: 1.0 (bucket 130944) once, 2.0 (bucket 131072) the other times;
    ``histogram`` replaces fields of the histogram, ``changes`` those of the result."""
    found = result_line(**changes)
    del found["samples"]
    found["histogram"] = {
        "scheme": "log2-128",
        "count": 100_001,
        "min": 1.0,
        "max": 2.0,
        "sum": 200_001.0,
        "sum_squares": 400_001.0,
        "buckets": [[130944, 1], [131072, 100_000]],
        **(histogram or {}),
    }
    return found
