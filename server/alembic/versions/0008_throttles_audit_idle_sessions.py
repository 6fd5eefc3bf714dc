"""Throttling state (auth_throttles), the audit log (audit_events) and idle expiry of
login sessions (login_sessions.last_seen_at); docs/database.md.

Sessions open at the upgrade count as seen at their start.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSONType = sa.JSON().with_variant(JSONB(), "postgresql")
Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "auth_throttles",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("scope", sa.Text(), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("last_failure_at", Timestamp, nullable=False),
        sa.Column("blocked_until", Timestamp, nullable=True),
        sa.Column("refusal_recorded", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.PrimaryKeyConstraint("id", name="pk_auth_throttles"),
        sa.UniqueConstraint("scope", "key", name="uq_auth_throttles_scope_key"),
    )
    op.create_table(
        "audit_events",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("at", Timestamp, nullable=False),
        sa.Column("action", sa.Text(), nullable=False),
        sa.Column("outcome", sa.Text(), nullable=False),
        sa.Column("actor_id", sa.Integer(), nullable=True),
        sa.Column("actor", sa.Text(), nullable=False),
        sa.Column("address", sa.Text(), nullable=True),
        sa.Column("target", sa.Text(), nullable=True),
        sa.Column("detail", JSONType, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_audit_events"),
        sa.ForeignKeyConstraint(
            ["actor_id"], ["users.id"], name="fk_audit_events_actor_id_users", ondelete="SET NULL"
        ),
    )
    op.create_index("ix_audit_events_actor_id", "audit_events", ["actor_id"])
    op.create_index("ix_audit_events_action_id", "audit_events", ["action", "id"])
    # Batch mode: SQLite adds no NOT NULL column without a constant default.
    with op.batch_alter_table("login_sessions") as batch:
        batch.add_column(sa.Column("last_seen_at", Timestamp, nullable=True))
    op.execute("UPDATE login_sessions SET last_seen_at = created_at")
    with op.batch_alter_table("login_sessions") as batch:
        batch.alter_column("last_seen_at", existing_type=Timestamp, nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("login_sessions") as batch:
        batch.drop_column("last_seen_at")
    op.drop_index("ix_audit_events_action_id", table_name="audit_events")
    op.drop_index("ix_audit_events_actor_id", table_name="audit_events")
    op.drop_table("audit_events")
    op.drop_table("auth_throttles")
