"""Job lifecycle: lease attempts, cancellation, streamed logs (docs/database.md).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("attempt", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(
            sa.Column("cancel_requested", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_table(
        "job_logs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("stream", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("received_at", Timestamp, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_job_logs"),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], name="fk_job_logs_job_id_jobs"),
        sa.UniqueConstraint("job_id", "seq", name="uq_job_logs_job_id_seq"),
    )


def downgrade() -> None:
    op.drop_table("job_logs")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("cancel_requested")
        batch.drop_column("attempt")
