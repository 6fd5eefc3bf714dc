"""Validating result-format records and storing an upload of them.

One invalid result refuses the whole upload and nothing is stored; an
``upload_id`` seen before stores nothing and is reported as a duplicate.
Each stored result is judged (:mod:`.validity`): its flags, its median's
interval and its write cache's scope are stored with it, and it belongs to its
machine's current epoch.

The checks are :mod:`xaclab_contracts.results`' (the agent makes the same
ones on each line a program prints), plus two only the server can make: the
result's suite is its job's, and its ``sut`` is a system that suite declares.

Fast path (an upload may carry a million samples): each result is validated
with a copy of the result schema whose ``samples`` is only ``{"type":
"array"}``, derived from the one schema file at start-up, and the samples are
checked by :func:`check_samples` (numbers, not booleans, finite, count within
the schema's bounds) with jsonschema's wording, then converted to one float64
numpy array that the statistics and the stored bytes are computed from.

A result with a ``histogram`` instead (more than 100,000 samples) is checked
the same way: the light schema leaves out the per-bucket rules, and
:func:`xaclab_contracts.histogram.check_histogram` checks the buckets and their
consistency with ``count``, ``min``, ``max`` and the sums.  It is stored packed in
``results.histogram`` (``results.samples`` empty) and summarised from it.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from jsonschema import Draft202012Validator
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from xaclab_contracts import results as contract
from xaclab_contracts.files import RESULT_SCHEMA
from xaclab_contracts.results import ResultFormatError, find_unstorable, float_or_inf
from xaclab_contracts.roles import ParamRoles, shipped_roles
from xaclab_contracts.suites import Suite

from xaclab_server.core.metrics import INGESTED_RESULTS, INGESTED_SAMPLES
from xaclab_server.models import Job, Machine, Result, Upload
from xaclab_server.services import histogram as hist
from xaclab_server.services.histogram import Histogram
from xaclab_server.services.series import attach_series
from xaclab_server.services.statistics import (
    FloatArray,
    pack_samples,
    summarize,
    summarize_histogram,
)
from xaclab_server.services.validity import judge

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
    """The result schema (``full``, and ``light`` without the per-sample checks) and the
    suites, whose declared systems a result's ``sut`` must be among."""

    schema: contract.ResultValidator
    suites: Mapping[str, Suite] = field(default_factory=dict)

    @property
    def full(self) -> Draft202012Validator:
        return self.schema.full


def load_validator(
    schema_path: Path = RESULT_SCHEMA, *, suites: Mapping[str, Suite] | None = None
) -> ResultValidator:
    return ResultValidator(contract.load_validator(schema_path), dict(suites or {}))


def check_results(*, validator: ResultValidator, results: list[Any], job: Job) -> list[Measured]:
    """Raise ResultError naming the first bad result; return each result's samples as float64,
    or its checked histogram."""
    if not results:
        raise ResultError("An upload carries at least one result.")
    measured: list[Measured] = []
    schema = validator.schema
    for index, result in enumerate(results):
        try:
            measured.append(_checked(schema, result))
            if result["suite"] == job.suite and job.suite in validator.suites:
                contract.check_system(result, validator.suites[job.suite])
        except ResultFormatError as exc:
            raise ResultError(f"Result {index} {exc.sentence()}.") from None
        if result["suite"] != job.suite:
            raise ResultError(
                f"Result {index} is from suite {result['suite']!r} but job {job.id} "
                f"runs suite {job.suite!r}."
            )
    return measured


def _checked(schema: contract.ResultValidator, result: Any) -> Measured:
    """One result through the contract's checks; raw samples take the numpy fast path."""
    contract.check_samples_or_histogram(result)
    fast = isinstance(result, dict) and (
        isinstance(result.get("samples"), list) or isinstance(result.get("histogram"), dict)
    )
    contract.check_schema(schema.light if fast else schema.full, result)
    if "histogram" in result:
        return hist.from_checked(contract.checked_histogram(result))
    try:
        samples = check_samples(result["samples"], low=schema.min_samples, high=schema.max_samples)
    except SampleError as exc:
        raise ResultFormatError(str(exc), "/".join(["samples", *exc.where])) from None
    bad = _find_unstorable_result(result, samples)
    if bad is not None:
        raise ResultFormatError("", bad, unstorable=True)
    return samples


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
    roles: ParamRoles | None = None,
) -> UploadOutcome:
    """Store validated results under ``upload_id`` once; commit, or roll back on a race.

    ``samples`` are the arrays and histograms :func:`check_results` returned (computed here
    when absent).  Each result joins its series (:mod:`.series`; ``roles`` say which params
    identify one, the shipped suites' when absent), which are marked for the detector.
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
    machine = session.get_one(Machine, job.machine_id)
    rows = [
        _result_row(upload=upload, job=job, machine=machine, result=r, samples=a)
        for r, a in zip(results, samples, strict=True)
    ]
    attach_series(session=session, job=job, results=rows, roles=roles or shipped_roles())
    session.add_all(rows)
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


def _result_row(
    *, upload: Upload, job: Job, machine: Machine, result: dict[str, Any], samples: Measured
) -> Result:
    if isinstance(samples, Histogram):
        summary = summarize_histogram(samples)
        packed, histogram = b"", hist.pack(samples)
    else:
        summary = summarize(samples)
        packed, histogram = pack_samples(samples), None
    library = result["library"]
    env = result.get("env", {})
    judgement = judge(
        env=env, summary=summary, measured=samples, epoch_fingerprint=machine.fingerprint or {}
    )
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
        env=env,
        epoch=machine.epoch,
        flags=judgement.flags,
        median_ci_low=judgement.median_ci_low,
        median_ci_high=judgement.median_ci_high,
        write_cache=judgement.write_cache,
    )
