"""The first schema: machines, runs, jobs, uploads, results (docs/database.md).

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSONType = sa.JSON().with_variant(JSONB(), "postgresql")
Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "machines",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("fingerprint", JSONType, nullable=False),
        sa.Column("fingerprint_hash", sa.Text(), nullable=False),
        sa.Column("token_hash", sa.Text(), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("last_seen_at", Timestamp, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_machines"),
        sa.UniqueConstraint("name", name="uq_machines_name"),
        sa.UniqueConstraint("token_hash", name="uq_machines_token_hash"),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("machine_id", sa.Integer(), nullable=False),
        sa.Column("suite", sa.Text(), nullable=False),
        sa.Column("profile", sa.Text(), nullable=False),
        sa.Column("params", JSONType, nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("finished_at", Timestamp, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_runs"),
        sa.ForeignKeyConstraint(
            ["machine_id"], ["machines.id"], name="fk_runs_machine_id_machines"
        ),
    )
    op.create_index("ix_runs_machine_id", "runs", ["machine_id"])
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("machine_id", sa.Integer(), nullable=False),
        sa.Column("suite", sa.Text(), nullable=False),
        sa.Column("profile", sa.Text(), nullable=False),
        sa.Column("params", JSONType, nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("progress", sa.Float(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("claimed_at", Timestamp, nullable=True),
        sa.Column("heartbeat_at", Timestamp, nullable=True),
        sa.Column("finished_at", Timestamp, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_jobs"),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_jobs_run_id_runs"),
        sa.ForeignKeyConstraint(
            ["machine_id"], ["machines.id"], name="fk_jobs_machine_id_machines"
        ),
    )
    op.create_index("ix_jobs_run_id", "jobs", ["run_id"])
    op.create_index("ix_jobs_machine_id_status", "jobs", ["machine_id", "status"])
    op.create_table(
        "uploads",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("upload_id", sa.Text(), nullable=False),
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("received_at", Timestamp, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_uploads"),
        sa.UniqueConstraint("upload_id", name="uq_uploads_upload_id"),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], name="fk_uploads_job_id_jobs"),
    )
    op.create_index("ix_uploads_job_id", "uploads", ["job_id"])
    op.create_table(
        "results",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("upload_pk", sa.Integer(), nullable=False),
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("machine_id", sa.Integer(), nullable=False),
        sa.Column("suite", sa.Text(), nullable=False),
        sa.Column("benchmark", sa.Text(), nullable=False),
        sa.Column("sut", sa.Text(), nullable=False),
        sa.Column("metric", sa.Text(), nullable=False),
        sa.Column("unit", sa.Text(), nullable=False),
        sa.Column("better", sa.Text(), nullable=False),
        sa.Column("params", JSONType, nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("mean", sa.Float(), nullable=False),
        sa.Column("median", sa.Float(), nullable=False),
        sa.Column("min", sa.Float(), nullable=False),
        sa.Column("max", sa.Float(), nullable=False),
        sa.Column("stddev", sa.Float(), nullable=True),
        sa.Column("p99", sa.Float(), nullable=False),
        sa.Column("samples", sa.LargeBinary(), nullable=False),
        sa.Column("library_version", sa.Text(), nullable=False),
        sa.Column("git_revision", sa.Text(), nullable=False),
        sa.Column("env", JSONType, nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_results"),
        sa.ForeignKeyConstraint(["upload_pk"], ["uploads.id"], name="fk_results_upload_pk_uploads"),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], name="fk_results_job_id_jobs"),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_results_run_id_runs"),
        sa.ForeignKeyConstraint(
            ["machine_id"], ["machines.id"], name="fk_results_machine_id_machines"
        ),
    )
    for column in ("upload_pk", "job_id", "run_id", "machine_id", "created_at"):
        op.create_index(f"ix_results_{column}", "results", [column])


def downgrade() -> None:
    op.drop_table("results")
    op.drop_table("uploads")
    op.drop_table("jobs")
    op.drop_table("runs")
    op.drop_table("machines")
