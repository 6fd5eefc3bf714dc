"""Provisioning files and dashboard JSON agree with each other and with house style."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parents[1]
PROVISIONING = HERE / "provisioning"


def _datasources() -> list[dict[str, Any]]:
    doc = yaml.safe_load((PROVISIONING / "datasources" / "xaclab.yml").read_text())
    assert doc["apiVersion"] == 1
    return list(doc["datasources"])


def _dashboards() -> list[tuple[Path, dict[str, Any]]]:
    return [(p, json.loads(p.read_text())) for p in sorted((HERE / "json").rglob("*.json"))]


def _walk(node: Any) -> list[dict[str, Any]]:
    found = []
    if isinstance(node, dict):
        if isinstance(node.get("datasource"), dict):
            found.append(node["datasource"])
        for value in node.values():
            found.extend(_walk(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_walk(value))
    return found


def test_datasources_have_fixed_uids_and_no_secrets() -> None:
    by_uid = {d["uid"]: d for d in _datasources()}
    assert set(by_uid) == {"xaclab-pg", "xaclab-prom"}
    pg = by_uid["xaclab-pg"]
    assert pg["type"] == "grafana-postgresql-datasource"
    assert pg["jsonData"]["database"]
    assert "database" not in pg  # Grafana 10+ reads it from jsonData only
    assert re.fullmatch(
        r"\$\{[A-Z_]+\}|\$__env\{[A-Z_]+\}|\$__file\{[^}]+\}", pg["secureJsonData"]["password"]
    )
    assert by_uid["xaclab-prom"]["type"] == "prometheus"


def test_dashboard_provider_reads_files_with_folders() -> None:
    doc = yaml.safe_load((PROVISIONING / "dashboards" / "xaclab.yml").read_text())
    assert doc["apiVersion"] == 1
    (provider,) = doc["providers"]
    assert provider["type"] == "file"
    assert provider["options"]["foldersFromFilesStructure"] is True
    assert "folder" not in provider and "folderUid" not in provider


def test_dashboards_use_only_provisioned_datasources() -> None:
    known = {d["uid"]: d["type"] for d in _datasources()}
    uids = set()
    for path, board in _dashboards():
        assert board.get("uid"), path
        assert board["uid"] not in uids, f"duplicate dashboard uid {board['uid']}"
        uids.add(board["uid"])
        for ref in _walk(board):
            assert known.get(ref.get("uid")) == ref.get("type"), (path, ref)


def test_sql_targets_are_raw_without_comments() -> None:
    for path, board in _dashboards():
        for ref_holder in _walk_targets(board):
            if ref_holder["datasource"]["uid"] != "xaclab-pg":
                continue
            assert ref_holder.get("rawQuery") is True and ref_holder.get("rawSql"), path
            assert ref_holder["format"] in ("time_series", "table"), path
            # Newer Grafana strips SQL comments before expanding macros; none
            # here, so every Grafana version runs the same SQL.
            assert "--" not in ref_holder["rawSql"] and "/*" not in ref_holder["rawSql"], path


def _walk_targets(board: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    stack = list(board.get("panels", []))
    while stack:
        panel = stack.pop()
        stack.extend(panel.get("panels", []))
        out.extend(panel.get("targets", []))
    out.extend(a["target"] for a in board.get("annotations", {}).get("list", []) if "target" in a)
    return out
