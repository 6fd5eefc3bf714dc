"""Validating result-format records and storing an upload of them.

One invalid result refuses the whole upload and nothing is stored; an
``upload_id`` seen before stores nothing and is reported as a duplicate.

Fast path (an upload may carry a million samples): each result is validated
with a copy of the result schema whose ``samples`` is only ``{"type":
"array"}``, derived from the one schema file at start-up, and the samples are
checked by :func:`check_samples` (numbers, not booleans, finite, count within
the schema's bounds) with jsonschema's wording, then converted to one float64
numpy array that the statistics and the stored bytes are computed from.

A result with a ``histogram`` instead (more than 100,000 samples) is checked
the same way: the light schema leaves out the per-bucket rules, and
:func:`.histogram.parse` checks the buckets and their consistency with
``count``, ``min``, ``max`` and the sums.  It is stored packed in
``results.histogram`` (``results.samples`` empty) and summarised from it.
"""

import copy
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import best_match
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from xaclab_server.core.metrics import INGESTED_RESULTS, INGESTED_SAMPLES
from xaclab_server.models import Job, Result, Upload
from xaclab_server.services import histogram as hist
from xaclab_server.services.histogram import Histogram, HistogramError
from xaclab_server.services.jsonvalues import find_unstorable
from xaclab_server.services.statistics import (
    FloatArray,
    pack_samples,
    summarize,
    summarize_histogram,
)

# The only shape of ``samples`` the fast path knows how to check; load_validator
# refuses to start on a schema that says anything else about them.
SAMPLES_KEYWORDS = frozenset({"type", "minItems", "maxItems", "items"})
HISTOGRAM_FLOATS = ("min", "max", "sum", "sum_squares")
Measured = FloatArray | Histogram


class ResultError(ValueError):
    """An upload that must be refused; the message is a sentence for the agent."""


class UploadConflict(ValueError):
    """An upload_id already used for another job."""


@dataclass(frozen=True, slots=True)
class UploadOutcome:
    stored: int
    duplicate: bool


@dataclass(frozen=True, slots=True)
class ResultValidator:
    """The result schema (``full``) and its copy without the per-sample checks (``light``)."""

    full: Draft202012Validator
    light: Draft202012Validator
    min_samples: int
    max_samples: int


def load_validator(schema_path: Path) -> ResultValidator:
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    samples = schema["properties"]["samples"]
    if (
        set(samples) != SAMPLES_KEYWORDS
        or samples["type"] != "array"
        or samples["items"] != {"type": "number"}
    ):
        raise ValueError(
            f"{schema_path}: 'samples' must be an array of numbers with minItems and maxItems "
            "(the upload fast path checks exactly that)"
        )
    _check_histogram_schema(schema_path, schema["properties"]["histogram"])
    light = copy.deepcopy(schema)
    light["properties"]["samples"] = {"type": "array"}
    light["properties"]["histogram"]["properties"]["buckets"] = {"type": "array"}
    return ResultValidator(
        full=Draft202012Validator(schema, format_checker=FormatChecker()),
        light=Draft202012Validator(light, format_checker=FormatChecker()),
        min_samples=int(samples["minItems"]),
        max_samples=int(samples["maxItems"]),
    )


def _check_histogram_schema(schema_path: Path, schema: dict[str, Any]) -> None:
    """The schema's histogram bounds must be the ones :mod:`.histogram` checks."""
    props = schema["properties"]
    buckets = props["buckets"]
    index_rule, count_rule = buckets["items"]["prefixItems"]
    found = (
        props["scheme"]["const"],
        props["count"]["minimum"],
        props["count"]["maximum"],
        buckets["maxItems"],
        index_rule["minimum"],
        index_rule["maximum"],
        count_rule["minimum"],
        count_rule["maximum"],
    )
    expected = (
        hist.SCHEME,
        hist.RAW_MAX + 1,
        hist.MAX_COUNT,
        hist.MAX_BUCKETS,
        hist.INDEX_MIN,
        hist.INDEX_MAX,
        1,
        hist.MAX_COUNT,
    )
    if found != expected:
        raise ValueError(
            f"{schema_path}: the histogram's bounds {found} are not the ones the upload fast "
            f"path checks {expected}"
        )


def check_results(*, validator: ResultValidator, results: list[Any], job: Job) -> list[Measured]:
    """Raise ResultError naming the first bad result; return each result's samples as float64,
    or its checked histogram."""
    if not results:
        raise ResultError("An upload carries at least one result.")
    measured: list[Measured] = []
    for index, result in enumerate(results):
        _check_samples_or_histogram(index, result)
        fast = isinstance(result, dict) and (
            isinstance(result.get("samples"), list) or isinstance(result.get("histogram"), dict)
        )
        error = best_match((validator.light if fast else validator.full).iter_errors(result))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
            raise ResultError(
                f"Result {index} does not follow the result format at {where}: {error.message}."
            )
        if "histogram" in result:
            measured.append(_checked_histogram(index, result))
        else:
            try:
                samples = check_samples(
                    result["samples"], low=validator.min_samples, high=validator.max_samples
                )
            except SampleError as exc:
                where = "/".join(["samples", *exc.where])
                raise ResultError(
                    f"Result {index} does not follow the result format at {where}: {exc}."
                ) from None
            bad = _find_unstorable_result(result, samples)
            if bad is not None:
                raise ResultError(
                    f"Result {index} has a non-finite number or a NUL character at {bad}."
                )
            measured.append(samples)
        if result["suite"] != job.suite:
            raise ResultError(
                f"Result {index} is from suite {result['suite']!r} but job {job.id} "
                f"runs suite {job.suite!r}."
            )
    return measured


def _check_samples_or_histogram(index: int, result: Any) -> None:
    """The schema's oneOf, with a sentence instead of jsonschema's dump of the whole result."""
    if not isinstance(result, dict):
        return
    has_samples, has_histogram = "samples" in result, "histogram" in result
    if has_samples and has_histogram:
        raise ResultError(
            f"Result {index} does not follow the result format at (top level): it carries "
            "both 'samples' and 'histogram'; a result carries one of them."
        )
    if not has_samples and not has_histogram:
        raise ResultError(
            f"Result {index} does not follow the result format at (top level): 'samples' is a "
            "required property (or, above 100,000 samples, 'histogram')."
        )


def _checked_histogram(index: int, result: dict[str, Any]) -> Histogram:
    raw = result["histogram"]
    for key in HISTOGRAM_FLOATS:
        if isinstance(raw[key], int) and not math.isfinite(float_or_inf(raw[key])):
            raise ResultError(
                f"Result {index} does not follow the result format at histogram/{key}: "
                "an integer too large for a float64."
            )
        if not math.isfinite(raw[key]):
            raise ResultError(
                f"Result {index} has a non-finite number or a NUL character at /histogram/{key}."
            )
    bad = _find_unstorable_result({k: v for k, v in result.items() if k != "histogram"}, None)
    if bad is not None:
        raise ResultError(f"Result {index} has a non-finite number or a NUL character at {bad}.")
    try:
        return hist.parse(raw)
    except HistogramError as exc:
        where = "/".join(["histogram", *exc.where])
        raise ResultError(
            f"Result {index} does not follow the result format at {where}: {exc}."
        ) from None


class SampleError(ValueError):
    """A ``samples`` array the schema refuses; ``where`` is the path below ``samples``."""

    def __init__(self, message: str, *where: str) -> None:
        super().__init__(message)
        self.where = where


def check_samples(samples: list[Any], *, low: int, high: int) -> FloatArray:
    """The samples as float64, checked as the schema's ``samples`` would, in a few C loops.

    Non-finite values are kept (the caller names their path); an integer too
    large for a float64 is refused.
    """
    if len(samples) < low:
        raise SampleError(f"{samples!r} " + ("should be non-empty" if low == 1 else "is too short"))
    if len(samples) > high:
        raise SampleError(f"[... {len(samples)} samples] is too long (at most {high})")
    if not set(map(type, samples)) <= {float, int}:  # bool is a subclass, not the type
        for index, value in enumerate(samples):
            if type(value) is not float and type(value) is not int:
                raise SampleError(f"{value!r} is not of type 'number'", str(index))
    try:
        return np.array(samples, dtype=np.float64)
    except OverflowError:
        for index, value in enumerate(samples):
            if isinstance(value, int) and not math.isfinite(float_or_inf(value)):
                raise SampleError(f"{value} is too large for a float64", str(index)) from None
        raise


def float_or_inf(value: int) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf


def _find_unstorable_result(result: dict[str, Any], samples: FloatArray | None) -> str | None:
    """find_unstorable over the result, the samples checked as one array."""
    for key, value in result.items():
        if key == "samples" and samples is not None:
            finite = np.isfinite(samples)
            if not bool(finite.all()):
                return f"/samples/{int(np.argmin(finite))}"
            continue
        bad = find_unstorable(value, f"/{key}")
        if bad is not None:
            return bad
    return None


def store_upload(
    *,
    session: Session,
    job: Job,
    upload_id: str,
    results: list[dict[str, Any]],
    samples: Sequence[Measured] | None = None,
) -> UploadOutcome:
    """Store validated results under ``upload_id`` once; commit, or roll back on a race.

    ``samples`` are the arrays and histograms :func:`check_results` returned (computed here
    when absent).
    """
    existing = session.scalar(select(Upload).where(Upload.upload_id == upload_id))
    if existing is not None:
        return _duplicate(existing, job)
    upload = Upload(upload_id=upload_id, job_id=job.id)
    session.add(upload)
    try:
        session.flush()
    except IntegrityError:
        # Another request stored the same upload_id between our read and insert.
        session.rollback()
        existing = session.scalar(select(Upload).where(Upload.upload_id == upload_id))
        if existing is None:
            raise
        return _duplicate(existing, job)
    if samples is None:
        samples = [
            hist.parse(r["histogram"])
            if "histogram" in r
            else np.asarray(r["samples"], dtype=np.float64)
            for r in results
        ]
    session.add_all(
        _result_row(upload=upload, job=job, result=r, samples=a)
        for r, a in zip(results, samples, strict=True)
    )
    session.commit()
    INGESTED_RESULTS.inc(len(results))
    INGESTED_SAMPLES.inc(sum(a.count if isinstance(a, Histogram) else len(a) for a in samples))
    return UploadOutcome(stored=len(results), duplicate=False)


def _duplicate(existing: Upload, job: Job) -> UploadOutcome:
    if existing.job_id != job.id:
        raise UploadConflict(
            f"Upload {existing.upload_id} was already stored for job {existing.job_id}, "
            f"not job {job.id}."
        )
    return UploadOutcome(stored=0, duplicate=True)


def _result_row(*, upload: Upload, job: Job, result: dict[str, Any], samples: Measured) -> Result:
    if isinstance(samples, Histogram):
        summary = summarize_histogram(samples)
        packed, histogram = b"", hist.pack(samples)
    else:
        summary = summarize(samples)
        packed, histogram = pack_samples(samples), None
    library = result["library"]
    return Result(
        upload_pk=upload.id,
        job_id=job.id,
        run_id=job.run_id,
        machine_id=job.machine_id,
        suite=result["suite"],
        benchmark=result["benchmark"],
        sut=result["sut"],
        metric=result["metric"],
        unit=result["unit"],
        better=result["better"],
        params=result["params"],
        n=summary.n,
        mean=summary.mean,
        median=summary.median,
        min=summary.min,
        max=summary.max,
        stddev=summary.stddev,
        p99=summary.p99,
        samples=packed,
        histogram=histogram,
        library_version=library["version"],
        git_revision=library["git_revision"],
        env=result.get("env", {}),
    )
