"""The record database's panels keep runs with kept pages apart from pages taken afresh.

The seeded lab (conftest.py) ran the record workload's LIBXAC variant both ways at
2 processes: in the full concurrency run, pages taken afresh in every transaction,
and in a run with ``keep_pages``.  The two cost very differently (an access fault
an operation against a few in a hundred, docs/benchmarks-records.md), so a panel
that pooled them would show a median of neither.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg

from dashboards.tests.test_dashboard_queries import DASHBOARDS, expanded

BOARD = "concurrency/concurrency.json"


def _panel_rows(seeded_db: str, title: str) -> list[dict[str, Any]]:
    board = json.loads((DASHBOARDS / BOARD).read_text())
    (panel,) = [p for p in board["panels"] if p["title"].startswith(title)]
    (target,) = panel["targets"]
    with psycopg.connect(seeded_db) as conn:
        cursor = conn.execute(expanded(conn, board, target["rawSql"]))
        names = [c.name for c in cursor.description or []]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def test_the_variant_chart_labels_kept_pages_apart(seeded_db: str) -> None:
    rows = _panel_rows(seeded_db, "Record database: wall and CPU time per variant")
    labels = {row["variant"] for row in rows}
    assert {"libxac (2 procs)", "libxac (2 procs, kept pages)"} <= labels, labels
    # Only LIBXAC keeps pages: no locking variant is labelled so.
    assert [label for label in labels if "kept" in label] == ["libxac (2 procs, kept pages)"]
    for row in rows:
        assert row["wall_ns"] is not None and row["wall_ns"] > 0, row


def test_the_table_has_a_row_of_each_way_to_take_pages(seeded_db: str) -> None:
    rows = _panel_rows(seeded_db, "Record database per machine")
    libxac_at_2 = [r for r in rows if r["variant"] == "libxac" and r["procs"] == 2]
    assert sorted(r["kept_pages"] for r in libxac_at_2) == ["false", "true"], libxac_at_2
    assert {r["kept_pages"] for r in rows if r["variant"] != "libxac"} == {"false"}
