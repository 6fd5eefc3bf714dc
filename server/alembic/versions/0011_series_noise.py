"""A series' run-to-run noise as the detector last measured it, so that the alerts page
can say which series would show a 5 % change without reading every point
(docs/change-points.md, "What a series can show").

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("series", sa.Column("noise", sa.Float(), nullable=True))
    op.add_column("series", sa.Column("noise_points", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("series") as batch:
        batch.drop_column("noise_points")
        batch.drop_column("noise")
