"""Which view of its series a change point was found in: the series itself, or the series
against its runs' other configurations (docs/change-points.md, "Two views of a series").

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "change_points",
        sa.Column("view", sa.Text(), nullable=False, server_default="series"),
    )


def downgrade() -> None:
    with op.batch_alter_table("change_points") as batch:
        batch.drop_column("view")
