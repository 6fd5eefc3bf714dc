"""Validity flags, the median's interval, the write cache's scope, and machine epochs
(docs/validity.md).

- ``results``: ``flags`` (NULL: not judged), ``median_ci_low`` / ``median_ci_high``,
  ``write_cache`` and ``epoch``.  Existing results are **not judged** here: their flags
  stay NULL, which every page and export shows as "not judged", until
  ``xaclab-server judge-results`` judges them from their stored env and samples with
  the current rules.  A migration does not import those rules: they change, and a
  migration must mean the same thing whenever it runs.
- ``machines.epoch`` and ``machine_epochs``: every existing machine gets epoch 1 with
  its current fingerprint, and every existing result epoch 1.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSONType = sa.JSON().with_variant(JSONB(), "postgresql")
Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.add_column(sa.Column("epoch", sa.Integer(), nullable=False, server_default="1"))
        batch.add_column(sa.Column("flags", JSONType, nullable=True))
        batch.add_column(sa.Column("median_ci_low", sa.Float(), nullable=True))
        batch.add_column(sa.Column("median_ci_high", sa.Float(), nullable=True))
        batch.add_column(sa.Column("write_cache", sa.Text(), nullable=True))
    with op.batch_alter_table("machines") as batch:
        batch.add_column(sa.Column("epoch", sa.Integer(), nullable=False, server_default="1"))
    op.create_table(
        "machine_epochs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("machine_id", sa.Integer(), nullable=False),
        sa.Column("epoch", sa.Integer(), nullable=False),
        sa.Column("fingerprint", JSONType, nullable=False),
        sa.Column("fingerprint_hash", sa.Text(), nullable=False),
        sa.Column("started_at", Timestamp, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_machine_epochs"),
        sa.ForeignKeyConstraint(
            ["machine_id"], ["machines.id"], name="fk_machine_epochs_machine_id_machines"
        ),
        sa.UniqueConstraint("machine_id", "epoch", name="uq_machine_epochs_machine_id"),
    )
    op.create_index("ix_machine_epochs_machine_id", "machine_epochs", ["machine_id"])
    op.execute(
        "INSERT INTO machine_epochs (machine_id, epoch, fingerprint, fingerprint_hash, started_at) "
        "SELECT id, 1, fingerprint, fingerprint_hash, created_at FROM machines"
    )


def downgrade() -> None:
    # SQLite's batch mode copies machines, which runs, jobs and results point at.
    if op.get_bind().dialect.name == "sqlite":
        op.execute("PRAGMA foreign_keys=OFF")
    op.drop_index("ix_machine_epochs_machine_id", table_name="machine_epochs")
    op.drop_table("machine_epochs")
    with op.batch_alter_table("machines") as batch:
        batch.drop_column("epoch")
    with op.batch_alter_table("results") as batch:
        batch.drop_column("write_cache")
        batch.drop_column("median_ci_high")
        batch.drop_column("median_ci_low")
        batch.drop_column("flags")
        batch.drop_column("epoch")
