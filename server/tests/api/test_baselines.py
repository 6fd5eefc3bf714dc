"""Baselines: an operator makes a run the baseline of its suite on its machine; one click
then compares any run against it, or against the previous run on the machine."""

import re

from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.conftest import add_user
from tests.lab_data import search_tree_records, storage_records
from tests.reproduction_helpers import register_machine, store_results


def test_a_baseline_is_set_replaced_listed_and_forgotten(client: TestClient, app: FastAPI) -> None:
    machine_id, agent = register_machine(client, "lab-baseline")
    first = store_results(client, machine_id, agent, "search-tree", search_tree_records(seed=1))
    second = store_results(client, machine_id, agent, "search-tree", search_tree_records(seed=2))
    url = f"/api/v1/machines/{machine_id}/baselines"
    assert client.get(url).json() == []
    reply = client.put(f"{url}/search-tree", json={"run_id": first})
    assert reply.status_code == 200, reply.text
    assert reply.json()["run_id"] == first
    assert client.put(f"{url}/search-tree", json={"run_id": second}).json()["run_id"] == second
    assert [b["run_id"] for b in client.get(url).json()] == [second]

    storage = store_results(client, machine_id, agent, "storage", storage_records())
    wrong = client.put(f"{url}/search-tree", json={"run_id": storage})
    assert wrong.status_code == 422
    assert (
        wrong.json()["detail"]
        == f"Run {storage} is not a run of search-tree on machine {machine_id}."
    )
    viewer = add_user(app, "baseline-viewer", "viewer")
    refused = client.put(
        f"{url}/search-tree", json={"run_id": first}, headers={"Authorization": f"Bearer {viewer}"}
    )
    assert refused.status_code == 403
    assert client.delete(f"{url}/search-tree").status_code == 204
    gone = client.delete(f"{url}/search-tree")
    assert gone.status_code == 404 and "has no baseline of search-tree" in gone.json()["detail"]
    assert client.get("/api/v1/machines/424242/baselines").status_code == 404


def test_a_run_without_results_cannot_be_a_baseline(client: TestClient) -> None:
    machine_id, _agent = register_machine(client, "lab-empty-baseline")
    made = client.post(
        "/api/v1/runs", json={"machine_id": machine_id, "suite": "storage", "profile": "quick"}
    ).json()
    reply = client.put(
        f"/api/v1/machines/{machine_id}/baselines/storage", json={"run_id": made["run_id"]}
    )
    assert reply.status_code == 422
    assert (
        reply.json()["detail"]
        == f"Run {made['run_id']} has no results yet; a baseline needs results."
    )


def test_one_click_comparisons_of_a_run(client: TestClient) -> None:
    machine_id, agent = register_machine(client, "lab-one-click")
    first = store_results(client, machine_id, agent, "search-tree", search_tree_records(seed=1))
    store_results(client, machine_id, agent, "storage", storage_records())
    second = store_results(client, machine_id, agent, "search-tree", search_tree_records(seed=2))
    third = store_results(client, machine_id, agent, "search-tree", search_tree_records(seed=3))
    client.put(f"/api/v1/machines/{machine_id}/baselines/search-tree", json={"run_id": first})

    page = client.get(f"/runs/{third}").text
    links = dict(re.findall(r'href="([^"]+)" data-testid="(compare-[a-z-]+)"', page))
    by_testid = {v: k.replace("&amp;", "&") for k, v in links.items()}
    # The previous run of the same suite on the machine (not the storage run between them).
    assert by_testid["compare-previous"] == f"/compare?kind=runs&a={second}&b={third}"
    assert by_testid["compare-baseline"] == f"/compare?kind=runs&a={first}&b={third}"
    assert by_testid["compare-sut-bdb"] == f"/compare?kind=sut&a=bdb&b=libxac&run={third}"
    assert by_testid["compare-sut-lmdb"] == f"/compare?kind=sut&a=lmdb&b=libxac&run={third}"
    compared = client.get(by_testid["compare-baseline"])
    assert compared.status_code == 200
    assert 'data-testid="forest"' in compared.text
    # The baseline's own page offers no comparison against itself.
    assert "compare-baseline" not in client.get(f"/runs/{first}").text


def test_the_previous_run_is_one_with_the_same_params(client: TestClient) -> None:
    machine_id, agent = register_machine(client, "lab-previous-alike")
    durable = {"durability": "durable"}
    first = store_results(
        client, machine_id, agent, "search-tree", search_tree_records(durability="durable"), durable
    )
    between = store_results(client, machine_id, agent, "search-tree", search_tree_records(seed=2))
    last = store_results(
        client,
        machine_id,
        agent,
        "search-tree",
        search_tree_records(seed=3, durability="durable"),
        durable,
    )
    # The durable run is compared with the last durable run, not the nondurable one between.
    page = client.get(f"/runs/{last}").text
    assert (
        f'href="/compare?kind=runs&amp;a={first}&amp;b={last}" data-testid="compare-previous"'
        in page
    )
    # A run with no earlier run of its params falls back to the newest of its profile.
    assert f"a={first}&amp;b={between}" in client.get(f"/runs/{between}").text
