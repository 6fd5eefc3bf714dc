"""Accounts (users, API tokens, login sessions), agent approval, run matrices,
schedules, and the comparison index on results (docs/database.md).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSONType = sa.JSON().with_variant(JSONB(), "postgresql")
Timestamp = sa.DateTime(timezone=True)


def _foreign_keys(on: bool) -> None:
    # SQLite's batch mode copies a table and drops the old one, which rows of
    # other tables still point at; enforcement is paused around it.  (SQLite
    # ignores this inside a transaction, but then nothing has been committed
    # yet and the tables are empty.)
    if op.get_bind().dialect.name == "sqlite":
        op.execute(f"PRAGMA foreign_keys={'ON' if on else 'OFF'}")


def upgrade() -> None:
    _foreign_keys(False)
    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("username", sa.Text(), nullable=False),
        sa.Column("password_hash", sa.Text(), nullable=False),
        sa.Column("role", sa.Text(), nullable=False),
        sa.Column("disabled", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("last_login_at", Timestamp, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_users"),
        sa.UniqueConstraint("username", name="uq_users_username"),
    )
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("prefix", sa.Text(), nullable=False),
        sa.Column("token_hash", sa.Text(), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("last_used_at", Timestamp, nullable=True),
        sa.Column("revoked_at", Timestamp, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_api_tokens"),
        sa.UniqueConstraint("token_hash", name="uq_api_tokens_token_hash"),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_api_tokens_user_id_users", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_api_tokens_user_id", "api_tokens", ["user_id"])
    op.create_table(
        "login_sessions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.Text(), nullable=False),
        sa.Column("csrf_token", sa.Text(), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("expires_at", Timestamp, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_login_sessions"),
        sa.UniqueConstraint("token_hash", name="uq_login_sessions_token_hash"),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_login_sessions_user_id_users", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_login_sessions_user_id", "login_sessions", ["user_id"])
    op.create_table(
        "schedules",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("cron", sa.Text(), nullable=False),
        sa.Column("spec", JSONType, nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False, server_default=sa.true()),
        sa.Column("next_run_at", Timestamp, nullable=False),
        sa.Column("last_run_at", Timestamp, nullable=True),
        sa.Column("created_by_id", sa.Integer(), nullable=True),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_schedules"),
        sa.ForeignKeyConstraint(
            ["created_by_id"],
            ["users.id"],
            name="fk_schedules_created_by_id_users",
            ondelete="SET NULL",
        ),
    )
    op.create_index("ix_schedules_created_by_id", "schedules", ["created_by_id"])
    op.create_index("ix_schedules_enabled_next_run_at", "schedules", ["enabled", "next_run_at"])
    op.create_table(
        "matrices",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("spec", JSONType, nullable=False),
        sa.Column("created_by_id", sa.Integer(), nullable=True),
        sa.Column("schedule_id", sa.Integer(), nullable=True),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_matrices"),
        sa.ForeignKeyConstraint(
            ["created_by_id"],
            ["users.id"],
            name="fk_matrices_created_by_id_users",
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["schedule_id"],
            ["schedules.id"],
            name="fk_matrices_schedule_id_schedules",
            ondelete="SET NULL",
        ),
    )
    op.create_index("ix_matrices_created_by_id", "matrices", ["created_by_id"])
    op.create_index("ix_matrices_schedule_id", "matrices", ["schedule_id"])
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("matrix_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("created_by_id", sa.Integer(), nullable=True))
        batch.create_foreign_key(
            "fk_runs_matrix_id_matrices", "matrices", ["matrix_id"], ["id"], ondelete="SET NULL"
        )
        batch.create_foreign_key(
            "fk_runs_created_by_id_users", "users", ["created_by_id"], ["id"], ondelete="SET NULL"
        )
        batch.create_index("ix_runs_matrix_id", ["matrix_id"])
    with op.batch_alter_table("machines") as batch:
        # Machines registered before approval existed came with the registration token.
        batch.add_column(
            sa.Column("approved", sa.Boolean(), nullable=False, server_default=sa.true())
        )
    op.create_index(
        "ix_results_machine_id_suite_benchmark_created_at",
        "results",
        ["machine_id", "suite", "benchmark", "created_at"],
    )
    _foreign_keys(True)


def downgrade() -> None:
    _foreign_keys(False)
    op.drop_index("ix_results_machine_id_suite_benchmark_created_at", table_name="results")
    with op.batch_alter_table("machines") as batch:
        batch.drop_column("approved")
    with op.batch_alter_table("runs") as batch:
        batch.drop_index("ix_runs_matrix_id")
        batch.drop_constraint("fk_runs_created_by_id_users", type_="foreignkey")
        batch.drop_constraint("fk_runs_matrix_id_matrices", type_="foreignkey")
        batch.drop_column("created_by_id")
        batch.drop_column("matrix_id")
    op.drop_table("matrices")
    op.drop_table("schedules")
    op.drop_table("login_sessions")
    op.drop_table("api_tokens")
    op.drop_table("users")
    _foreign_keys(True)
