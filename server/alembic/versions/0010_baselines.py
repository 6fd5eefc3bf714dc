"""Baselines: the run of a suite on a machine that later runs are compared against
(docs/database.md).

Revision ID: 0010
Revises: 0008
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "baselines",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("machine_id", sa.Integer(), nullable=False),
        sa.Column("suite", sa.Text(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("set_by_id", sa.Integer(), nullable=True),
        sa.Column("set_at", Timestamp, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_baselines"),
        sa.UniqueConstraint("machine_id", "suite", name="uq_baselines_machine_id"),
        sa.ForeignKeyConstraint(
            ["machine_id"], ["machines.id"], name="fk_baselines_machine_id_machines"
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_baselines_run_id_runs", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["set_by_id"], ["users.id"], name="fk_baselines_set_by_id_users", ondelete="SET NULL"
        ),
    )
    op.create_index("ix_baselines_run_id", "baselines", ["run_id"])


def downgrade() -> None:
    op.drop_index("ix_baselines_run_id", table_name="baselines")
    op.drop_table("baselines")
