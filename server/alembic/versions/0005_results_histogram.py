"""results.histogram: the packed histogram of a result with more than 100,000 samples
(docs/result-format.md, "Histograms"); NULL for results that carry raw samples, and
``samples`` is empty for those that carry a histogram.  Existing rows keep their raw
samples and get NULL.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("results", sa.Column("histogram", sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.drop_column("histogram")
