"""The comparisons read each param's role from the suite files, not from a list in Python."""

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from xaclab_contracts.files import SUITES_DIR
from xaclab_contracts.roles import param_roles, shipped_roles
from xaclab_contracts.suites import load_suites

from tests.helpers import AGENT, claim, register, result_record, upload
from xaclab_server.services import comparisons


def _search_tree_run(client: TestClient, results: list[dict[str, Any]]) -> int:
    machine_id, headers = register(client)
    body = {"machine_ids": [machine_id], "suites": ["search-tree"], "factors": {}}
    run_id: int = client.post("/api/v1/matrices", json=body).json()["runs"][0]["run_id"]
    job_id = claim(client, headers).json()["job_id"]
    assert upload(client, headers, job_id, results).status_code == 201
    client.post(f"{AGENT}/jobs/{job_id}/finish", json={"status": "succeeded"}, headers=headers)
    return run_id


def _insert(sut: str, scale: float, **params: Any) -> dict[str, Any]:
    return result_record(
        suite="search-tree",
        benchmark="insert",
        sut=sut,
        metric="time_per_insert",
        params={"count": 1000, "procs": 1, "durability": "nondurable", **params},
        samples=[scale * (1 + i / 1000) for i in range(12)],
    )


def test_a_param_declared_system_in_a_suite_file_changes_the_matching(
    app: FastAPI, client: TestClient, tmp_path: Path
) -> None:
    """Berkeley DB with a knob no suite knows (fanout) pairs with LIBXAC only once the
    search-tree suite file declares it system-specific; no Python changes."""
    run_id = _search_tree_run(
        client,
        [
            _insert("libxac", 80.0, tree="btree"),
            _insert("bdb", 10.0, mode="nosync", fanout=16),
            _insert("bdb", 20.0, mode="nosync", fanout=64),
        ],
    )
    declared = tmp_path / "suites"
    declared.mkdir()
    for path in SUITES_DIR.glob("*.json"):
        declaration = json.loads(path.read_text())
        if declaration["name"] == "search-tree":
            declaration["recorded"]["fanout"] = {"role": "system", "help": "B-tree fanout."}
        (declared / path.name).write_text(json.dumps(declaration))
    roles = param_roles(load_suites(declared))
    assert shipped_roles().role("search-tree", "fanout") == "workload"
    assert roles.role("search-tree", "fanout") == "system"

    def compare(**kwargs: Any) -> comparisons.Comparison:
        with app.state.sessionmaker() as session:
            return comparisons.compare_suts(
                session=session,
                a="libxac",
                b="bdb",
                run_id=run_id,
                matrix_id=None,
                statistic="median",
                **kwargs,
            )

    unknown = compare()
    assert unknown.pairs == [] and unknown.only_a == 1 and unknown.only_b == 2
    assert "fanout" not in unknown.note

    known = compare(roles=roles)
    ratios = {p.params["bdb.fanout"]: p.ratio for p in known.pairs}
    assert ratios == {16: pytest.approx(10 / 80), 64: pytest.approx(20 / 80)}
    assert all(p.params["libxac.tree"] == "btree" for p in known.pairs)
    assert "fanout" in known.note and "tree" in known.note


def test_observed_params_never_split_a_runs_comparison(app: FastAPI, client: TestClient) -> None:
    """write_protect is declared observed: two runs that differ only there pair up; a
    workload param (count) that differs does not."""
    a = _search_tree_run(client, [_insert("libxac", 80.0, tree="btree", write_protect="uffd")])
    b = _search_tree_run(
        client,
        [
            _insert("libxac", 40.0, tree="btree", write_protect="mprotect"),
            _insert("libxac", 40.0, tree="btree", count=2000),
        ],
    )
    with app.state.sessionmaker() as session:
        found = comparisons.compare_runs(session=session, a=a, b=b, statistic="median")
    assert len(found.pairs) == 1 and found.only_a == 0 and found.only_b == 1
    assert found.pairs[0].ratio == pytest.approx(0.5)
