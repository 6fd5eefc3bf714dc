"""The change-point dashboard on real PostgreSQL: its annotation query marks the probe's
change at run 13 with its size, interval and the runs either side, and its panels show
the same change."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import psycopg

from dashboards.grafana_sql import Variable, expand
from dashboards.tests.probe_series import PROBE_MACHINE
from dashboards.tests.test_dashboard_queries import DASHBOARDS, _time_range

BOARD = json.loads((DASHBOARDS / "change points" / "change-points.json").read_text())


def _run(conn: psycopg.Connection[Any], sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    expanded = expand(
        sql,
        _time_range(BOARD),
        variables={
            "machine": Variable([PROBE_MACHINE], multi=True, include_all=True),
            "suite": Variable(["page-touch"], multi=True, include_all=True),
        },
        interval=timedelta(hours=1),
    )
    cursor = conn.execute(expanded)
    return [c.name for c in cursor.description or []], cursor.fetchall()


def test_the_annotation_marks_the_probes_change_at_run_13(seeded_db: str) -> None:
    (annotation,) = BOARD["annotations"]["list"]
    with psycopg.connect(seeded_db) as conn:
        columns, rows = _run(conn, annotation["target"]["rawSql"])
        first_slow = conn.execute(
            """SELECT r.created_at, r.run_id FROM results r JOIN machines m ON m.id = r.machine_id
               WHERE m.name = %s ORDER BY r.created_at, r.id OFFSET 12 LIMIT 1""",
            (PROBE_MACHINE,),
        ).fetchone()
    assert columns == ["time", "text", "tags"]
    assert first_slow is not None
    ((time, text, tags),) = rows
    assert time == first_slow[0]
    assert text.startswith("+15.0 % (95 % interval +15.0 to +15.0) regression: page-touch page_touch")
    assert f"to #{first_slow[1]}," in text and PROBE_MACHINE in text
    assert tags == f"regression,page-touch,{PROBE_MACHINE}"


def test_the_panels_show_the_same_change(seeded_db: str) -> None:
    series_panel, table_panel, _noise_panel = BOARD["panels"]
    with psycopg.connect(seeded_db) as conn:
        columns, rows = _run(conn, table_panel["targets"][0]["rawSql"])
        table = [dict(zip(columns, row, strict=True)) for row in rows]
        _columns, points = _run(conn, series_panel["targets"][0]["rawSql"])
    (change,) = table
    assert float(change["change_percent"]) == 15.0 and change["direction"] == "regression"
    assert change["run_after"] == change["run_before"] + 1 and change["state"] == "open"
    ratios = [round(float(value), 6) for _time, _metric, value in points]
    assert ratios == [1.0] * 12 + [1.15] * 8


def test_the_noise_panel_lists_the_probes_series_with_no_noise_between_its_changes(
    seeded_db: str,
) -> None:
    """The probe is constant on either side of its step: the detector measures no noise
    between its change points (the step is not noise), from all of its points."""
    *_others, noise_panel = BOARD["panels"]
    with psycopg.connect(seeded_db) as conn:
        columns, rows = _run(conn, noise_panel["targets"][0]["rawSql"])
    table = [dict(zip(columns, row, strict=True)) for row in rows]
    (probe,) = [row for row in table if row["machine"].startswith(PROBE_MACHINE)]
    assert probe["benchmark"] == "page_touch" and probe["system"] == "libxac"
    assert float(probe["noise_percent"]) == 0.0 and probe["points"] == 20
    judged = [row for row in table if row["noise_percent"] is not None]
    assert [row["noise_percent"] for row in judged] == sorted(
        (row["noise_percent"] for row in judged), reverse=True
    )
