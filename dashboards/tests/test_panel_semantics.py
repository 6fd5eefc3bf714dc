"""Panels whose SQL was reshaped for speed answer exactly what the plain query answers.

The plain queries below say what the panels mean; the dashboards run faster
forms of them (docs/dashboards.md, "Query speed").  Both are expanded the same
way and run on the seeded results of real runs; their rows must be equal.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import psycopg
import pytest

from dashboards.grafana_sql import expand
from dashboards.tests.test_dashboard_queries import DASHBOARDS, _time_range, _variables

# The ratio of the medians over every (reference result, system result) pair of a run.
RATIO_OVER_TIME = """
SELECT
  $__timeGroupAlias(r.created_at, $__interval),
  m.name || ' epoch ' || r.epoch || ' $reference / ' || o.sut AS metric,
  percentile_cont(0.5) WITHIN GROUP (ORDER BY r.median)
    / nullif(percentile_cont(0.5) WITHIN GROUP (ORDER BY o.median), 0) AS value
FROM results r
JOIN machines m ON m.id = r.machine_id
JOIN results o ON o.run_id = r.run_id AND o.suite = r.suite AND o.benchmark = r.benchmark
  AND o.metric = r.metric AND o.sut IN ($system) AND o.params->>'procs' = r.params->>'procs'
WHERE r.suite = 'search-tree'
  AND r.benchmark = 'insert'
  AND r.metric = 'throughput'
  AND r.sut = '$reference'
  AND r.params->>'procs' = '1'
  AND coalesce(r.params->>'tree', 'btree') = 'btree'
  AND NOT coalesce((r.params->>'advisory')::boolean, false)
  AND coalesce(r.params->>'version', 'transactional') = 'transactional'
  AND m.name IN ($machine)
  AND $__timeFilter(r.created_at)
GROUP BY 1, 2
ORDER BY 1, 2
"""

# The newest storage result per machine and directory (the highest id among equal times).
LATEST_STORAGE = """
SELECT DISTINCT ON (m.name, r.env->'storage'->>'directory')
  m.name AS machine,
  r.epoch,
  r.created_at AS "time",
  CASE r.write_cache WHEN 'on' THEN 'device cache on' WHEN 'off' THEN 'device cache off'
    WHEN 'kernel-on' THEN 'kernel flushes on; device cache unchanged'
    WHEN 'kernel-off' THEN 'kernel flushes off; device cache unchanged'
    ELSE coalesce(r.params->>'write_cache', 'unknown') END AS write_cache,
  r.env->'write_cache'->>'device_changed' AS device_changed,
  r.env->'write_cache'->>'requested' AS requested,
  r.env->'storage'->>'directory' AS directory,
  r.env->'storage'->>'fstype' AS fstype,
  r.env->'storage'->>'mount_options' AS mount_options,
  (SELECT string_agg(d->>'name' || ' ' || coalesce(d->>'model', '?')
                     || ' (' || coalesce(d->>'write_cache_kernel', '?') || ')', ', ')
     FROM jsonb_array_elements(coalesce(r.env->'storage'->'disks', '[]'::jsonb)) AS d) AS disks
FROM results r
JOIN machines m ON m.id = r.machine_id
WHERE r.suite = 'storage'
  AND m.name IN ($machine)
  AND $__timeFilter(r.created_at)
ORDER BY m.name, r.env->'storage'->>'directory', r.created_at DESC, r.id DESC
"""

CASES = [
    ("LIBXAC vs Berkeley DB/libxac-vs-bdb.json", "Insert throughput ratio over time", RATIO_OVER_TIME),
    ("storage/storage.json", "Write cache and storage under test", LATEST_STORAGE),
]


def _rows(conn: psycopg.Connection[Any], sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    cursor = conn.execute(sql)
    return [c.name for c in cursor.description or []], cursor.fetchall()


@pytest.mark.parametrize(("path", "title", "plain"), CASES, ids=[c[1] for c in CASES])
def test_panel_answers_what_the_plain_query_answers(
    seeded_db: str, path: str, title: str, plain: str
) -> None:
    board = json.loads((DASHBOARDS / path).read_text())
    (panel,) = [p for p in board["panels"] if p["title"].startswith(title)]
    (target,) = panel["targets"]
    assert target["rawSql"] != plain.strip(), "the panel runs the plain query itself"
    with psycopg.connect(seeded_db) as conn:
        variables = _variables(conn, board)

        def run(sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
            return _rows(
                conn, expand(sql, _time_range(board), variables=variables, interval=timedelta(hours=1))
            )

        fast = run(target["rawSql"])
        reference = run(plain)
    assert reference[1], f"{title}: the seeded results give the plain query no rows"
    assert fast == reference
