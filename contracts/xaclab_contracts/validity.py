"""What makes a result doubtful: the validity flags, their thresholds, and the write cache's scope.

The server judges every result at ingest from its own env and samples and
stores the flags with it (docs/validity.md); pages, exports, comparisons and
dashboards show them.  The names and thresholds are here so that every part
uses the same ones.

=========================  ===========================================================
flag                       raised when
=========================  ===========================================================
``noisy``                  the agent saw the machine busy before or after the run
                           (``env.hygiene.noisy``)
``kernel_only_write_cache``  a write-cache change reached only the kernel's view of a
                           disk: the kernel stopped (or started) sending flushes, the
                           device's own cache did not change
``high_variation``         the coefficient of variation is above :data:`CV_THRESHOLD`
                           and the 95% interval of the median is wider than
                           ±:data:`MEDIAN_CI_THRESHOLD_PERCENT` (or has too few samples
                           to exist)
``too_few_samples``        fewer than :data:`MIN_SAMPLES`: a two-sided Mann–Whitney test
                           of 3 against 3 cannot reach p < 0.05 at all (benchstat's rule)
``fingerprint_differs``    the identity fields of the result's fingerprint differ from
                           the machine's registered ones
=========================  ===========================================================

The write cache's **scope** (:func:`write_cache_setting`): ``on`` and ``off``
are the device's own cache, set or read by hdparm, sdparm or nvme-cli;
``kernel-on`` and ``kernel-off`` are only the kernel's view
(``/sys/block/X/queue/write_cache``), which decides whether the kernel sends
cache flushes and says nothing about the device.  A ``kernel-off`` result is
never the thesis's "write cache off".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

NOISY: Final = "noisy"
KERNEL_ONLY_WRITE_CACHE: Final = "kernel_only_write_cache"
HIGH_VARIATION: Final = "high_variation"
TOO_FEW_SAMPLES: Final = "too_few_samples"
FINGERPRINT_DIFFERS: Final = "fingerprint_differs"
FLAGS: Final = (
    NOISY,
    KERNEL_ONLY_WRITE_CACHE,
    HIGH_VARIATION,
    TOO_FEW_SAMPLES,
    FINGERPRINT_DIFFERS,
)
# Short words for tables and dashboards.
FLAG_LABELS: Final = {
    NOISY: "noisy machine",
    KERNEL_ONLY_WRITE_CACHE: "kernel-only write cache",
    HIGH_VARIATION: "high variation",
    TOO_FEW_SAMPLES: "too few samples",
    FINGERPRINT_DIFFERS: "fingerprint differs",
}

CV_THRESHOLD: Final = 0.10
MEDIAN_CI_THRESHOLD_PERCENT: Final = 5.0
MIN_SAMPLES: Final = 4
FDR_LEVEL: Final = 0.05  # Benjamini–Hochberg's q threshold within one comparison

WRITE_CACHE_SETTINGS: Final = ("on", "off", "kernel-on", "kernel-off")
WRITE_CACHE_LABELS: Final = {
    "on": "device cache on",
    "off": "device cache off",
    "kernel-on": "kernel flushes on; device cache unchanged",
    "kernel-off": "kernel flushes off; device cache unchanged",
}


def write_cache_setting(write_cache: Any) -> str | None:
    """The write cache a result ran under, with its scope; None when unknown or mixed.

    ``write_cache`` is the result's ``env.write_cache`` (docs/write-cache.md).
    A disk whose backend does not change the device (the kernel's view, or an
    agent too old to say) makes the whole setting kernel-only.
    """
    if not isinstance(write_cache, Mapping):
        return None
    state = write_cache.get("state")
    disks = write_cache.get("disks")
    if state not in ("on", "off") or not isinstance(disks, Mapping) or not disks:
        return None
    device = all(isinstance(d, Mapping) and d.get("changes_device") is True for d in disks.values())
    return str(state) if device else f"kernel-{state}"


def kernel_only_change(write_cache: Any) -> str:
    """A sentence when a requested write-cache change reached only the kernel; else ''."""
    if not isinstance(write_cache, Mapping) or write_cache.get("requested") not in ("on", "off"):
        return ""
    disks = write_cache.get("disks")
    if not isinstance(disks, Mapping):
        return ""
    kernel = sorted(
        str(name)
        for name, disk in disks.items()
        if not (isinstance(disk, Mapping) and disk.get("changes_device") is True)
    )
    if not kernel:
        return ""
    requested = write_cache["requested"]
    return (
        f"write_cache={requested} changed only the kernel's view of {', '.join(kernel)} "
        f"({WRITE_CACHE_LABELS['kernel-' + requested]})"
    )


def noisy(env: Mapping[str, Any]) -> str:
    """A sentence when the agent flagged the machine busy around the run; else ''."""
    hygiene = env.get("hygiene")
    if not isinstance(hygiene, Mapping) or hygiene.get("noisy") is not True:
        return ""
    loads = []
    for when in ("before", "after"):
        snap = hygiene.get(when)
        if isinstance(snap, Mapping) and _number(snap.get("loadavg_1m")):
            loads.append(f"{snap['loadavg_1m']:g} {when}")
    threshold = hygiene.get("noisy_threshold")
    told = f" against the threshold {threshold:g}" if _number(threshold) else ""
    return "the machine was busy around the run" + (
        f": 1-minute load {', '.join(loads)}{told}" if loads else ""
    )


def variation(
    *, n: int, mean: float, stddev: float | None, ci_half_width_percent: float | None
) -> str:
    """A sentence when the samples vary too much for the median to be trusted; else ''."""
    if stddev is None or mean == 0 or not math.isfinite(mean):
        return ""
    cv = stddev / abs(mean)
    if cv <= CV_THRESHOLD:
        return ""
    if ci_half_width_percent is not None and ci_half_width_percent <= MEDIAN_CI_THRESHOLD_PERCENT:
        return ""
    precise = (
        f"the 95% interval of the median is ±{ci_half_width_percent:.1f}%"
        if ci_half_width_percent is not None
        else f"{n} samples are too few for a 95% interval of the median"
    )
    return (
        f"coefficient of variation {cv * 100:.1f}% (above {CV_THRESHOLD * 100:g}%), and {precise}"
    )


def too_few(n: int) -> str:
    if n >= MIN_SAMPLES:
        return ""
    return (
        f"{n} sample{'s' if n != 1 else ''}: a comparison needs at least {MIN_SAMPLES} "
        "(3 against 3 can never reach p < 0.05 in a Mann–Whitney test)"
    )


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
