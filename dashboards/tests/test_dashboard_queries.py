"""Every SQL query of every dashboard runs against PostgreSQL holding real runs.

Panel targets, template-variable queries and annotation queries are expanded
exactly as Grafana would (template variables, global substitutions,
PostgreSQL macros: dashboards/grafana_sql.py) and executed; an SQL error or
an empty result fails.  Variables are resolved in their order on the
dashboard, each query seeing the ones before it (chained variables); a
multi-value or include-all variable takes every value its query returns, as
Grafana's "All" would, a single-value one the first (``__value`` when the
query names one, as Grafana's ``__text``/``__value`` convention does).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from dashboards.grafana_sql import TimeRange, Variable, expand

DASHBOARDS = Path(__file__).resolve().parents[1] / "json"
PG_UID = "xaclab-pg"


def _panels(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for panel in items:
        out.append(panel)
        out.extend(_panels(panel.get("panels", [])))  # panels inside collapsed rows
    return out


def _sql_targets() -> list[tuple[str, str, dict[str, Any]]]:
    found = []
    for path in sorted(DASHBOARDS.rglob("*.json")):
        board = json.loads(path.read_text())
        name = str(path.relative_to(DASHBOARDS))
        for panel in _panels(board.get("panels", [])):
            for target in panel.get("targets", []):
                if "rawSql" in target:
                    found.append((f"{name}#{panel['id']}:{target.get('refId', 'A')}", str(path), target))
        for annotation in board.get("annotations", {}).get("list", []):
            target = annotation.get("target", {})
            if "rawSql" in target:
                found.append((f"{name}#annotation:{annotation['name']}", str(path), target))
    return found


def _variable_queries() -> list[tuple[str, str, str]]:
    return [
        (f"{path.relative_to(DASHBOARDS)}${var['name']}", str(path), var["name"])
        for path in sorted(DASHBOARDS.rglob("*.json"))
        for var in json.loads(path.read_text()).get("templating", {}).get("list", [])
    ]


TARGETS = _sql_targets()
VARIABLES = _variable_queries()


def _relative(text: str, now: datetime) -> datetime:
    """Grafana's now-30d style bounds (the forms the dashboards use)."""
    if text == "now":
        return now
    assert text.startswith("now-"), text
    amount, unit = int(text[4:-1]), text[-1]
    return (
        now
        - {
            "m": timedelta(minutes=amount),
            "h": timedelta(hours=amount),
            "d": timedelta(days=amount),
            "w": timedelta(weeks=amount),
        }[unit]
    )


def _time_range(board: dict[str, Any]) -> TimeRange:
    now = datetime.now(UTC)
    return TimeRange(_relative(board["time"]["from"], now), _relative(board["time"]["to"], now))


def _variables(conn: psycopg.Connection[Any], board: dict[str, Any]) -> dict[str, Variable]:
    variables: dict[str, Variable] = {}
    for var in board.get("templating", {}).get("list", []):
        assert var["type"] == "query", f"variable {var['name']}: only query variables are tested"
        assert var["datasource"]["uid"] == PG_UID
        sql = expand(var["query"], _time_range(board), variables=variables, interval=timedelta(hours=1))
        try:
            cursor = conn.execute(sql)
        except psycopg.Error as exc:
            pytest.fail(f"variable {var['name']}: {exc}\n--- SQL sent ---\n{sql}")
        rows = cursor.fetchall()
        assert rows, f"variable {var['name']} has no values\n--- SQL sent ---\n{sql}"
        columns = [c.name for c in cursor.description or []]
        index = columns.index("__value") if "__value" in columns else 0
        values = [str(r[index]) for r in rows]
        variables[var["name"]] = Variable(
            values if var.get("multi") or var.get("includeAll") else values[0],
            multi=bool(var.get("multi")),
            include_all=bool(var.get("includeAll")),
        )
    return variables


def expanded(conn: psycopg.Connection[Any], board: dict[str, Any], sql: str) -> str:
    """``sql`` of a panel of ``board`` as Grafana would send it: the dashboard's time range,
    its variables resolved against ``conn``, an interval of an hour."""
    return expand(sql, _time_range(board), variables=_variables(conn, board), interval=timedelta(hours=1))


def test_there_are_panel_queries() -> None:
    assert TARGETS, f"no rawSql targets under {DASHBOARDS}"
    assert any("#annotation:" in ident for ident, _, _ in TARGETS), "no annotation query"


@pytest.mark.parametrize(("ident", "path", "name"), VARIABLES, ids=[v[0] for v in VARIABLES])
def test_variable_query_returns_values(seeded_db: str, ident: str, path: str, name: str) -> None:
    board = json.loads(Path(path).read_text())
    with psycopg.connect(seeded_db) as conn:
        assert name in _variables(conn, board), ident


@pytest.mark.parametrize(("ident", "path", "target"), TARGETS, ids=[t[0] for t in TARGETS])
def test_panel_query_returns_rows(seeded_db: str, ident: str, path: str, target: dict[str, Any]) -> None:
    board = json.loads(Path(path).read_text())
    assert target["datasource"]["uid"] == PG_UID, ident
    assert target.get("format") in ("time_series", "table"), ident
    with psycopg.connect(seeded_db) as conn:
        sql = expanded(conn, board, target["rawSql"])
        try:
            cursor = conn.execute(sql)
        except psycopg.Error as exc:
            pytest.fail(f"{ident}: {exc}\n--- SQL sent ---\n{sql}")
        rows = cursor.fetchall()
        columns = [c.name for c in cursor.description or []]
    assert rows, f"{ident}: no rows\n--- SQL sent ---\n{sql}"
    if target["format"] == "time_series":
        assert "time" in columns, f"{ident}: a time series needs a column named time"
        times = [row[columns.index("time")] for row in rows]
        assert times == sorted(times), f"{ident}: the time column is not sorted"
