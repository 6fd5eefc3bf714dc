"""A result: one validated result-format record (docs/result-format.md).

Invariants: ``samples`` holds the raw samples packed as little-endian float64,
or is empty when the result carried a histogram (more than 100,000 samples);
then ``histogram`` holds it packed (:func:`xaclab_server.services.histogram.pack`),
and is NULL otherwise.  ``n``, ``mean``, ``median``, ``min``, ``max``, ``stddev``
and ``p99`` are computed by the server from one or the other
(:mod:`xaclab_server.services.statistics`), never taken from a client.
``stddev`` is NULL when there is one sample.

Validity (docs/validity.md), judged by the server at ingest from the result's
own env and samples (:mod:`xaclab_server.services.validity`): ``flags`` maps
each flag raised to the sentence that says why, ``{}`` for a clean result and
NULL for one stored before flags existed ("not judged").  ``median_ci_low`` and
``median_ci_high`` are the 95% interval of the median (NULL below six samples
or when not judged); ``write_cache`` is the write cache the result ran under
with its scope (``on``, ``off``, ``kernel-on``, ``kernel-off``; NULL when
unknown).  ``epoch`` is the machine's epoch the result belongs to
(:mod:`xaclab_server.models.machine_epoch`): series never mix epochs.
``series_id`` is the series the result is a point of (NULL for results stored
before series existed, until ``xaclab-server build-series``).
"""

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, LargeBinary, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from xaclab_server.models.base import Base, utcnow


class Result(Base):
    __tablename__ = "results"
    # The comparison pages and the Grafana panels select one machine's results
    # of a suite and benchmark over time (docs/database.md, "Indexes").
    __table_args__ = (
        Index(
            "ix_results_machine_id_suite_benchmark_created_at",
            "machine_id",
            "suite",
            "benchmark",
            "created_at",
        ),
        # The panels select every machine's results of a benchmark's metric over time,
        # and pair a run's results with each other.
        Index("ix_results_run_id_suite_benchmark_metric", "run_id", "suite", "benchmark", "metric"),
        Index(
            "ix_results_machine_id_suite_benchmark_metric_created_at",
            "machine_id",
            "suite",
            "benchmark",
            "metric",
            "created_at",
        ),
        Index(
            "ix_results_suite_benchmark_metric_created_at",
            "suite",
            "benchmark",
            "metric",
            "created_at",
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    upload_pk: Mapped[int] = mapped_column(ForeignKey("uploads.id"), index=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id"), index=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id"), index=True)
    machine_id: Mapped[int] = mapped_column(ForeignKey("machines.id"), index=True)
    suite: Mapped[str] = mapped_column(Text)
    benchmark: Mapped[str] = mapped_column(Text)
    sut: Mapped[str] = mapped_column(Text)
    metric: Mapped[str] = mapped_column(Text)
    unit: Mapped[str] = mapped_column(Text)
    better: Mapped[str] = mapped_column(Text)
    params: Mapped[dict[str, Any]]
    n: Mapped[int]
    mean: Mapped[float]
    median: Mapped[float]
    min: Mapped[float]
    max: Mapped[float]
    stddev: Mapped[float | None]
    p99: Mapped[float]
    samples: Mapped[bytes] = mapped_column(LargeBinary)
    histogram: Mapped[bytes | None] = mapped_column(LargeBinary)
    library_version: Mapped[str] = mapped_column(Text)
    git_revision: Mapped[str] = mapped_column(Text)
    env: Mapped[dict[str, Any]]
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    epoch: Mapped[int] = mapped_column(default=1, server_default="1")
    # Python None is SQL NULL ("not judged"), never the JSON value null.
    flags: Mapped[dict[str, Any] | None] = mapped_column(
        JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")
    )
    median_ci_low: Mapped[float | None]
    median_ci_high: Mapped[float | None]
    write_cache: Mapped[str | None] = mapped_column(Text)
    series_id: Mapped[int | None] = mapped_column(ForeignKey("series.id"), index=True)
