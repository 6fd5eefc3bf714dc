"""Validating result-format records and storing an upload of them.

One invalid result refuses the whole upload and nothing is stored; an
``upload_id`` seen before stores nothing and is reported as a duplicate.
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import best_match
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from xaclab_server.core.metrics import INGESTED_RESULTS, INGESTED_SAMPLES
from xaclab_server.models import Job, Result, Upload
from xaclab_server.services.jsonvalues import find_unstorable
from xaclab_server.services.statistics import pack_samples, summarize


class ResultError(ValueError):
    """An upload that must be refused; the message is a sentence for the agent."""


class UploadConflict(ValueError):
    """An upload_id already used for another job."""


@dataclass(frozen=True, slots=True)
class UploadOutcome:
    stored: int
    duplicate: bool


def load_validator(schema_path: Path) -> Draft202012Validator:
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=FormatChecker())


def check_results(*, validator: Draft202012Validator, results: list[Any], job: Job) -> None:
    """Raise ResultError naming the first bad result, so the agent can tell which one."""
    if not results:
        raise ResultError("An upload carries at least one result.")
    for index, result in enumerate(results):
        error = best_match(validator.iter_errors(result))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
            raise ResultError(
                f"Result {index} does not follow the result format at {where}: {error.message}."
            )
        bad = find_unstorable(result)
        if bad is not None:
            raise ResultError(
                f"Result {index} has a non-finite number or a NUL character at {bad}."
            )
        if result["suite"] != job.suite:
            raise ResultError(
                f"Result {index} is from suite {result['suite']!r} but job {job.id} "
                f"runs suite {job.suite!r}."
            )


def store_upload(
    *, session: Session, job: Job, upload_id: str, results: list[dict[str, Any]]
) -> UploadOutcome:
    """Store validated results under ``upload_id`` once; commit, or roll back on a race."""
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
    session.add_all(_result_row(upload=upload, job=job, result=r) for r in results)
    session.commit()
    INGESTED_RESULTS.inc(len(results))
    INGESTED_SAMPLES.inc(sum(len(r["samples"]) for r in results))
    return UploadOutcome(stored=len(results), duplicate=False)


def _duplicate(existing: Upload, job: Job) -> UploadOutcome:
    if existing.job_id != job.id:
        raise UploadConflict(
            f"Upload {existing.upload_id} was already stored for job {existing.job_id}, "
            f"not job {job.id}."
        )
    return UploadOutcome(stored=0, duplicate=True)


def _result_row(*, upload: Upload, job: Job, result: dict[str, Any]) -> Result:
    samples = [float(s) for s in result["samples"]]
    summary = summarize(samples)
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
        samples=pack_samples(samples),
        library_version=library["version"],
        git_revision=library["git_revision"],
        env=result.get("env", {}),
    )
