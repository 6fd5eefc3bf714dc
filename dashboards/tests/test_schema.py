"""Every dashboard against dashboards/schema/dashboard.schema.json, and what a schema cannot say.

The schema is the subset of Grafana's dashboard JSON model the dashboards
use, with Grafana's field names (docs/dashboards.md says why it is ours: no
registry package ships Grafana's dashboard schema as JSON Schema).  The
negative cases prove it refuses a broken dashboard rather than passing
anything.  The layout and variable checks cover what JSON Schema cannot
express: panels inside the 24-column grid without overlapping, unique ids,
every ``$variable`` a query uses defined on its dashboard.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

HERE = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((HERE / "schema" / "dashboard.schema.json").read_text())
BOARDS = sorted((HERE / "json").rglob("*.json"))
FOLDERS = {
    "LIBXAC vs Berkeley DB",
    "page-touch",
    "storage",
    "concurrency",
    "search trees",
    "lab",
    "machine during runs",
    "change points",
}
# Grafana's own variables: built-ins and the PostgreSQL macros.
GRAFANA_NAMES = re.compile(r"^__")


def _validator() -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    return jsonschema.Draft202012Validator(SCHEMA)


def _load(path: Path) -> dict[str, Any]:
    board: dict[str, Any] = json.loads(path.read_text())
    return board


def test_one_folder_per_directory() -> None:
    assert {p.parent.name for p in BOARDS} == FOLDERS
    assert all(p.parent.parent == HERE / "json" for p in BOARDS), "folders are one level deep"


@pytest.mark.parametrize("path", BOARDS, ids=[str(p.relative_to(HERE / "json")) for p in BOARDS])
def test_dashboard_matches_schema(path: Path) -> None:
    errors = [f"{e.json_path}: {e.message}" for e in _validator().iter_errors(_load(path))]
    assert not errors, "\n".join(errors)


def _layout_problems(board: dict[str, Any]) -> list[str]:
    problems = []
    cells: dict[tuple[int, int], int] = {}
    ids = set()
    for panel in board["panels"]:
        if panel["id"] in ids:
            problems.append(f"duplicate panel id {panel['id']}")
        ids.add(panel["id"])
        pos = panel["gridPos"]
        if pos["x"] + pos["w"] > 24:
            problems.append(f"panel {panel['id']} ends past column 24")
        for x in range(pos["x"], pos["x"] + pos["w"]):
            for y in range(pos["y"], pos["y"] + pos["h"]):
                other = cells.setdefault((x, y), panel["id"])
                if other != panel["id"]:
                    problems.append(f"panels {other} and {panel['id']} overlap at ({x}, {y})")
    return sorted(set(problems))


def _queries(board: dict[str, Any]) -> list[str]:
    texts = [v["query"] for v in board["templating"]["list"]]
    targets = [t for p in board["panels"] for t in p["targets"]]
    targets += [a["target"] for a in board["annotations"]["list"]]
    texts += [t.get("rawSql") or t["expr"] for t in targets]
    texts += [p["title"] for p in board["panels"]]
    return texts


def _undefined_variables(board: dict[str, Any]) -> list[str]:
    defined = {v["name"] for v in board["templating"]["list"]}
    used = set()
    for text in _queries(board):
        used |= set(re.findall(r"\$\{?(\w+)", text))
    return sorted(name for name in used - defined if not GRAFANA_NAMES.match(name))


@pytest.mark.parametrize("path", BOARDS, ids=[str(p.relative_to(HERE / "json")) for p in BOARDS])
def test_layout_and_variables(path: Path) -> None:
    board = _load(path)
    assert not _layout_problems(board)
    assert not _undefined_variables(board)


def _sample() -> dict[str, Any]:
    return _load(HERE / "json" / "machine during runs" / "machine-during-runs.json")


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(board: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = board
        for key in parents:
            node = node[int(key)] if key.isdigit() else node[key]
        node[int(last) if last.isdigit() else last] = value

    return change


def _drop(path: str) -> Callable[[dict[str, Any]], None]:
    def change(board: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = board
        for key in parents:
            node = node[int(key)] if key.isdigit() else node[key]
        del node[last]

    return change


BROKEN = {
    "no uid": _drop("uid"),
    "misspelt top-level key": _set("panel", []),
    "no panels": _set("panels", []),
    "unknown panel type": _set("panels.0.type", "graph2"),
    "panel wider than the grid": _set("panels.0.gridPos.w", 25),
    "gridPos as strings": _set("panels.0.gridPos.x", "0"),
    "target without a query": _drop("panels.0.targets.0.expr"),
    "sql format misspelt": _set("annotations.list.0.target.format", "timeseries"),
    "sql target on the prometheus datasource": _set(
        "annotations.list.0.target.datasource", {"type": "prometheus", "uid": "xaclab-prom"}
    ),
    "variable refresh out of range": _set("templating.list.0.refresh", 3),
    "variable of an untested type": _set("templating.list.0.type", "custom"),
    "time range not relative": _set("time.from", "yesterday"),
    "unknown datasource type": _set("panels.0.datasource.type", "mysql"),
    "override matcher unknown": _set(
        "panels.0.fieldConfig.overrides", [{"matcher": {"id": "byColour", "options": "x"}, "properties": []}]
    ),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_schema_refuses_a_broken_dashboard(name: str) -> None:
    board = copy.deepcopy(_sample())
    assert not list(_validator().iter_errors(board))
    BROKEN[name](board)
    assert list(_validator().iter_errors(board)), f"the schema accepted a dashboard with {name}"


def test_layout_check_refuses_overlap_and_undefined_variable() -> None:
    board = copy.deepcopy(_sample())
    board["panels"][1]["gridPos"] = dict(board["panels"][0]["gridPos"])
    assert any("overlap" in p for p in _layout_problems(board))
    board["panels"][0]["targets"][0]["expr"] += ' or up{instance="$host"}'
    assert _undefined_variables(board) == ["host"]
