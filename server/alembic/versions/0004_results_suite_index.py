"""Indexes on results for the Grafana panels (docs/server.md, "Performance"): by suite,
benchmark, metric and time (panels over every machine), and by run, suite, benchmark
and metric (panels that pair a run's results with each other), and by machine, suite,
benchmark, metric and time (a machine's baseline in a panel's subquery).

On PostgreSQL also: raw samples are marked ``STORAGE EXTERNAL`` (uncompressed; random
doubles do not compress) with ``toast_tuple_target = 128``.  This was meant to keep the
heap rows the panels scan small, but PostgreSQL only toasts rows above about 2 KB
(TOAST_TUPLE_THRESHOLD), so rows of up to ~120 samples stay in the heap (docs/server.md);
and JIT compilation is turned off for the database: it cost 150 ms on panel queries
that run in 90 ms without it.  Rows written before this migration keep their layout
until rewritten (``VACUUM FULL results``).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEXES = {
    "ix_results_suite_benchmark_metric_created_at": ["suite", "benchmark", "metric", "created_at"],
    "ix_results_run_id_suite_benchmark_metric": ["run_id", "suite", "benchmark", "metric"],
    "ix_results_machine_id_suite_benchmark_metric_created_at": [
        "machine_id",
        "suite",
        "benchmark",
        "metric",
        "created_at",
    ],
}


def upgrade() -> None:
    for name, columns in INDEXES.items():
        op.create_index(name, "results", columns)
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE results ALTER COLUMN samples SET STORAGE EXTERNAL")
        op.execute("ALTER TABLE results SET (toast_tuple_target = 128)")
        op.execute(JIT_OFF.format(setting="off"))


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(JIT_OFF.format(setting="on"))
        op.execute("ALTER TABLE results RESET (toast_tuple_target)")
        op.execute("ALTER TABLE results ALTER COLUMN samples SET STORAGE EXTENDED")
    for name in INDEXES:
        op.drop_index(name, table_name="results")


# Only the database's owner may; a migration run by another role goes on without it.
JIT_OFF = """
DO $$
BEGIN
    EXECUTE format('ALTER DATABASE %I SET jit = {setting}', current_database());
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'not the owner of the database: leaving jit as it is';
END
$$
"""
