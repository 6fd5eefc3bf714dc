"""One series over time (GET /api/v1/history and /history): every result of the machine with
the series' params, across its epochs, each with its interval and flags."""

import json
from urllib.parse import quote

from fastapi.testclient import TestClient

from tests.lab_data import WORKLOAD, search_tree_records
from tests.reproduction_helpers import register_machine, store_results
from tests.validity_helpers import FINGERPRINT, fingerprint

LMDB_PARAMS = {**WORKLOAD, "durability": "nondurable", "mode": "nosync", "map_mib": 4096}


def _query(machine_id: int, params: dict[str, object]) -> str:
    return (
        f"machine_id={machine_id}&suite=search-tree&benchmark=insert&sut=lmdb"
        f"&metric=throughput&unit=ops/s&params={quote(json.dumps(params))}"
    )


def test_a_series_spans_runs_and_epochs_and_nothing_else(client: TestClient) -> None:
    machine_id, agent = register_machine(client, "lab-history", FINGERPRINT)
    first = store_results(client, machine_id, agent, "search-tree", search_tree_records(seed=1))
    second = store_results(client, machine_id, agent, "search-tree", search_tree_records(seed=2))
    # Another series of the same metric: two processes.
    other = search_tree_records(seed=3)
    for record in other:
        record["params"]["procs"] = 2
    store_results(client, machine_id, agent, "search-tree", other)
    # A new kernel: the machine registers again and starts epoch 2.
    again, agent = register_machine(
        client, "lab-history", fingerprint(kernel={"release": "6.12.9"})
    )
    assert again == machine_id
    third = store_results(client, machine_id, agent, "search-tree", search_tree_records(seed=4))

    reply = client.get(f"/api/v1/history?{_query(machine_id, LMDB_PARAMS)}")
    assert reply.status_code == 200, reply.text
    history = reply.json()
    assert [p["run_id"] for p in history["points"]] == [first, second, third]
    assert [p["epoch"] for p in history["points"]] == [1, 1, 2]
    assert [e["epoch"] for e in history["epochs"]] == [1, 2]
    assert "kernel.release" in " ".join(history["epochs"][1]["changed"])
    assert history["title"].startswith("LMDB: insert throughput on lab-history")
    assert history["y_title"] == "throughput (operations/s; higher is better)"
    assert all(p["low"] <= p["median"] <= p["high"] for p in history["points"])
    assert history["change_points"] == []

    page = client.get(f"/history?{_query(machine_id, LMDB_PARAMS)}")
    assert page.status_code == 200
    assert page.text.count('href="/runs/') >= 3
    assert "a new epoch: the identity fingerprint changed" in page.text
    assert "No change point has been found in this series." in page.text
    assert f"/compare?kind=runs&amp;a={first}&amp;b={second}" in page.text


def test_bad_history_queries_get_a_sentence(client: TestClient) -> None:
    machine_id, agent = register_machine(client, "lab-bad-history")
    reply = client.get(f"/api/v1/history?{_query(424242, LMDB_PARAMS)}")
    assert reply.status_code == 404 and "Machine 424242 does not exist." in reply.json()["detail"]
    reply = client.get(
        f"/api/v1/history?{_query(machine_id, {})}".replace("params=%7B%7D", "params=%5B1%5D")
    )
    assert reply.status_code == 422 and "params must be a JSON object" in reply.json()["detail"]
    page = client.get("/history?machine_id=1&suite=search-tree")
    assert page.status_code == 422 and "benchmark, sut, metric, unit missing" in page.text
    assert client.get(f"/history?{_query(424242, LMDB_PARAMS)}").status_code == 404
    assert (
        client.get("/history?machine_id=x&suite=s&benchmark=b&sut=s&metric=m&unit=u").status_code
        == 404
    )
    empty = client.get(f"/api/v1/history?{_query(machine_id, {'procs': 7})}").json()
    assert empty["points"] == []
