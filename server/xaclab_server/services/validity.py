"""Judging a result at ingest: its validity flags, its median's interval, its write cache.

The rules and thresholds are :mod:`xaclab_contracts.validity`'s and
:mod:`xaclab_contracts.precision`'s (docs/validity.md); this module applies them
to one result, from its own env and samples and the fingerprint of its
machine's epoch:

- ``noisy``, ``kernel_only_write_cache``: from ``env.hygiene`` and ``env.write_cache``;
- ``too_few_samples``, ``high_variation``: from n, the mean, the standard deviation
  and the 95% interval of the median;
- ``fingerprint_differs``: the identity fields of ``env`` against the epoch's
  fingerprint, each differing field named.

:func:`judge_stored` judges a result stored before flags existed, for
``xaclab-server judge-results``.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session
from xaclab_contracts import validity
from xaclab_contracts.fingerprint import identity_differences
from xaclab_contracts.precision import half_width_percent, median_interval_ranks

from xaclab_server.models import MachineEpoch, Result
from xaclab_server.services import histogram as hist
from xaclab_server.services.histogram import Histogram
from xaclab_server.services.statistics import FloatArray, Summary, summarize, summarize_histogram

NOT_JUDGED = "not judged: stored before validity flags existed"
JUDGE_BATCH = 500


@dataclass(frozen=True, slots=True)
class Judgement:
    flags: dict[str, str]
    median_ci_low: float | None
    median_ci_high: float | None
    write_cache: str | None


def median_interval(measured: FloatArray | Histogram) -> tuple[float, float] | None:
    """The 95% interval of the median: order statistics of the samples, or the histogram's
    values at the same ranks (each within 0.39% of the true one)."""
    if isinstance(measured, Histogram):
        ranks = median_interval_ranks(measured.count)
        if ranks is None:
            return None
        return measured.value_at_rank(ranks[0]), measured.value_at_rank(ranks[1])
    ranks = median_interval_ranks(len(measured))
    if ranks is None:
        return None
    ordered = np.sort(measured)
    return float(ordered[ranks[0] - 1]), float(ordered[ranks[1] - 1])


def judge(
    *,
    env: Mapping[str, Any],
    summary: Summary,
    measured: FloatArray | Histogram,
    epoch_fingerprint: Mapping[str, Any],
) -> Judgement:
    interval = median_interval(measured)
    width = None if interval is None else half_width_percent(*interval, summary.median)
    write_cache = env.get("write_cache")
    found = {
        validity.NOISY: validity.noisy(env),
        validity.KERNEL_ONLY_WRITE_CACHE: validity.kernel_only_change(write_cache),
        validity.HIGH_VARIATION: validity.variation(
            n=summary.n, mean=summary.mean, stddev=summary.stddev, ci_half_width_percent=width
        ),
        validity.TOO_FEW_SAMPLES: validity.too_few(summary.n),
        validity.FINGERPRINT_DIFFERS: _fingerprint(env, epoch_fingerprint),
    }
    return Judgement(
        flags={name: why for name, why in found.items() if why},
        median_ci_low=None if interval is None else interval[0],
        median_ci_high=None if interval is None else interval[1],
        write_cache=validity.write_cache_setting(write_cache),
    )


def _fingerprint(env: Mapping[str, Any], registered: Mapping[str, Any]) -> str:
    differences = identity_differences(dict(registered), dict(env))
    if not differences:
        return ""
    if "fingerprint_version" not in env:
        return "the result carries no fingerprint to hold against the machine's registered one"
    return "registered against this result: " + "; ".join(differences)


def judge_stored(*, session: Session, limit: int = JUDGE_BATCH) -> int:
    """Judge up to ``limit`` results whose flags are NULL; commit; how many were judged."""
    rows = session.scalars(
        select(Result).where(Result.flags.is_(None)).order_by(Result.id).limit(limit)
    ).all()
    epochs: dict[tuple[int, int], Mapping[str, Any]] = {}
    for result in rows:
        key = (result.machine_id, result.epoch)
        if key not in epochs:
            epoch = session.scalar(
                select(MachineEpoch).where(
                    MachineEpoch.machine_id == key[0], MachineEpoch.epoch == key[1]
                )
            )
            epochs[key] = epoch.fingerprint if epoch is not None else {}
        measured: FloatArray | Histogram
        if result.histogram is not None:
            measured = hist.unpack(result.histogram)
            summary = summarize_histogram(measured)
        else:
            measured = np.frombuffer(result.samples, dtype="<f8").astype(np.float64)
            summary = summarize(measured)
        judgement = judge(
            env=result.env or {}, summary=summary, measured=measured, epoch_fingerprint=epochs[key]
        )
        store(result, judgement)
    session.commit()
    return len(rows)


def store(result: Result, judgement: Judgement) -> None:
    result.flags = judgement.flags
    result.median_ci_low = judgement.median_ci_low
    result.median_ci_high = judgement.median_ci_high
    result.write_cache = judgement.write_cache
