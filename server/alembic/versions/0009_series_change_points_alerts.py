"""Series, change points and their alerts, the alerting settings and webhook outbox,
bisections and their runs (series, change_points, watch_settings, webhook_deliveries,
bisections, bisection_runs; results.series_id); docs/database.md and docs/change-points.md.

Results stored before this revision belong to no series until
``xaclab-server build-series`` (a migration must mean the same whenever it runs;
which params identify a series comes from the suite files).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSONType = sa.JSON().with_variant(JSONB(), "postgresql")
Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "series",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("machine_id", sa.Integer(), nullable=False),
        sa.Column("epoch", sa.Integer(), nullable=False),
        sa.Column("suite", sa.Text(), nullable=False),
        sa.Column("benchmark", sa.Text(), nullable=False),
        sa.Column("metric", sa.Text(), nullable=False),
        sa.Column("unit", sa.Text(), nullable=False),
        sa.Column("better", sa.Text(), nullable=False),
        sa.Column("sut", sa.Text(), nullable=False),
        sa.Column("params", JSONType, nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("last_point_at", Timestamp, nullable=False),
        sa.Column("pending", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("claimed_until", Timestamp, nullable=True),
        sa.Column("detected_at", Timestamp, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_series"),
        sa.UniqueConstraint("key", name="uq_series_key"),
        sa.ForeignKeyConstraint(
            ["machine_id"], ["machines.id"], name="fk_series_machine_id_machines"
        ),
    )
    op.create_index("ix_series_machine_id", "series", ["machine_id"])
    op.create_index("ix_series_pending", "series", ["pending"])
    op.create_table(
        "change_points",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("series_id", sa.Integer(), nullable=False),
        sa.Column("before_run_id", sa.Integer(), nullable=False),
        sa.Column("after_run_id", sa.Integer(), nullable=False),
        sa.Column("before_at", Timestamp, nullable=False),
        sa.Column("after_at", Timestamp, nullable=False),
        sa.Column("before_revision", sa.Text(), nullable=False),
        sa.Column("after_revision", sa.Text(), nullable=False),
        sa.Column("points_before", sa.Integer(), nullable=False),
        sa.Column("points_after", sa.Integer(), nullable=False),
        sa.Column("mean_before", sa.Float(), nullable=False),
        sa.Column("mean_after", sa.Float(), nullable=False),
        sa.Column("change", sa.Float(), nullable=False),
        sa.Column("change_low", sa.Float(), nullable=True),
        sa.Column("change_high", sa.Float(), nullable=True),
        sa.Column("p_value", sa.Float(), nullable=False),
        sa.Column("noise", sa.Float(), nullable=False),
        sa.Column("direction", sa.Text(), nullable=False),
        sa.Column("detected_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.Column("withdrawn_at", Timestamp, nullable=True),
        sa.Column("state", sa.Text(), nullable=False, server_default="open"),
        sa.Column("state_by_id", sa.Integer(), nullable=True),
        sa.Column("state_at", Timestamp, nullable=True),
        sa.Column("note", sa.Text(), nullable=False, server_default=""),
        sa.PrimaryKeyConstraint("id", name="pk_change_points"),
        sa.ForeignKeyConstraint(
            ["series_id"], ["series.id"], name="fk_change_points_series_id_series"
        ),
        sa.ForeignKeyConstraint(
            ["before_run_id"], ["runs.id"], name="fk_change_points_before_run_id_runs"
        ),
        sa.ForeignKeyConstraint(
            ["after_run_id"], ["runs.id"], name="fk_change_points_after_run_id_runs"
        ),
        sa.ForeignKeyConstraint(
            ["state_by_id"],
            ["users.id"],
            name="fk_change_points_state_by_id_users",
            ondelete="SET NULL",
        ),
    )
    op.create_index("ix_change_points_series_id", "change_points", ["series_id"])
    op.create_index("ix_change_points_after_run_id", "change_points", ["after_run_id"])
    op.create_index("ix_change_points_state_id", "change_points", ["state", "id"])
    op.create_table(
        "watch_settings",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("webhook_url", sa.Text(), nullable=True),
        sa.Column("auto_bisect", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.Column("updated_by_id", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_watch_settings"),
        sa.ForeignKeyConstraint(
            ["updated_by_id"],
            ["users.id"],
            name="fk_watch_settings_updated_by_id_users",
            ondelete="SET NULL",
        ),
    )
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("event", sa.Text(), nullable=False),
        sa.Column("change_point_id", sa.Integer(), nullable=True),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("payload", JSONType, nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", Timestamp, nullable=False),
        sa.Column("last_error", sa.Text(), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("delivered_at", Timestamp, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_deliveries"),
        sa.ForeignKeyConstraint(
            ["change_point_id"],
            ["change_points.id"],
            name="fk_webhook_deliveries_change_point_id_change_points",
            ondelete="SET NULL",
        ),
    )
    op.create_index(
        "ix_webhook_deliveries_change_point_id", "webhook_deliveries", ["change_point_id"]
    )
    op.create_index(
        "ix_webhook_deliveries_status_next",
        "webhook_deliveries",
        ["status", "next_attempt_at"],
    )
    op.create_table(
        "bisections",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("change_point_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("good_revision", sa.Text(), nullable=False),
        sa.Column("bad_revision", sa.Text(), nullable=False),
        sa.Column("candidates", JSONType, nullable=False),
        sa.Column("steps", JSONType, nullable=False),
        sa.Column("culprit", sa.Text(), nullable=True),
        sa.Column("confidence", sa.Float(), nullable=True),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("started_by_id", sa.Integer(), nullable=True),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("finished_at", Timestamp, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_bisections"),
        sa.ForeignKeyConstraint(
            ["change_point_id"],
            ["change_points.id"],
            name="fk_bisections_change_point_id_change_points",
        ),
        sa.ForeignKeyConstraint(
            ["started_by_id"],
            ["users.id"],
            name="fk_bisections_started_by_id_users",
            ondelete="SET NULL",
        ),
    )
    op.create_index("ix_bisections_change_point_id", "bisections", ["change_point_id"])
    op.create_table(
        "bisection_runs",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("bisection_id", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", name="pk_bisection_runs"),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_bisection_runs_run_id_runs"),
        sa.ForeignKeyConstraint(
            ["bisection_id"], ["bisections.id"], name="fk_bisection_runs_bisection_id_bisections"
        ),
    )
    op.create_index("ix_bisection_runs_bisection_id", "bisection_runs", ["bisection_id"])
    # No table refers to results, so SQLite's batch mode may copy it.
    with op.batch_alter_table("results") as batch:
        batch.add_column(sa.Column("series_id", sa.Integer(), nullable=True))
        batch.create_foreign_key("fk_results_series_id_series", "series", ["series_id"], ["id"])
        batch.create_index("ix_results_series_id", ["series_id"])


def downgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.drop_index("ix_results_series_id")
        batch.drop_constraint("fk_results_series_id_series", type_="foreignkey")
        batch.drop_column("series_id")
    op.drop_table("bisection_runs")
    op.drop_table("bisections")
    op.drop_table("webhook_deliveries")
    op.drop_table("watch_settings")
    op.drop_table("change_points")
    op.drop_table("series")
