"""Every panel query of every dashboard runs against PostgreSQL holding a real run.

Each rawSql is expanded exactly as Grafana would (template variables, global
substitutions, PostgreSQL macros: dashboards/grafana_sql.py) and executed; an
SQL error or an empty result fails.  Template variables take the values their
own queries return, as Grafana's "All" would.
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
        for panel in _panels(board.get("panels", [])):
            for target in panel.get("targets", []):
                if "rawSql" in target:
                    ident = f"{path.relative_to(DASHBOARDS)}#{panel['id']}:{target.get('refId', 'A')}"
                    found.append((ident, str(path), target))
    return found


TARGETS = _sql_targets()


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
        rows = conn.execute(var["query"]).fetchall()
        assert rows, f"variable {var['name']} has no values"
        values = [str(r[0]) for r in rows]
        variables[var["name"]] = Variable(
            values if var.get("multi") or var.get("includeAll") else values[0],
            multi=bool(var.get("multi")),
            include_all=bool(var.get("includeAll")),
        )
    return variables


def test_there_are_panel_queries() -> None:
    assert TARGETS, f"no rawSql targets under {DASHBOARDS}"


@pytest.mark.parametrize(("ident", "path", "target"), TARGETS, ids=[t[0] for t in TARGETS])
def test_panel_query_returns_rows(seeded_db: str, ident: str, path: str, target: dict[str, Any]) -> None:
    board = json.loads(Path(path).read_text())
    assert target["datasource"]["uid"] == PG_UID, ident
    assert target.get("format") in ("time_series", "table"), ident
    with psycopg.connect(seeded_db) as conn:
        sql = expand(
            target["rawSql"],
            _time_range(board),
            variables=_variables(conn, board),
            interval=timedelta(hours=1),
        )
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
