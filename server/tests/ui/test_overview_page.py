"""A machine's overview (/machines/{id}): per suite, its latest run, LIBXAC against every other
system that run measured, and every measure with a small trend, in one epoch."""

import re
from typing import Any

from fastapi.testclient import TestClient

from tests.lab_data import page_touch_records, search_tree_records, storage_records
from tests.reproduction_helpers import register_machine, store_results
from tests.validity_helpers import FINGERPRINT, fingerprint


def test_the_overview_compares_libxac_with_every_other_system(client: TestClient) -> None:
    machine_id, agent = register_machine(client, "lab-overview", FINGERPRINT)
    store_results(client, machine_id, agent, "search-tree", search_tree_records(seed=1))
    latest = store_results(
        client, machine_id, agent, "search-tree", search_tree_records(seed=2, libxac_speed=1.2)
    )
    store_results(client, machine_id, agent, "page-touch", page_touch_records())
    store_results(client, machine_id, agent, "storage", storage_records())

    page = client.get(f"/machines/{machine_id}")
    assert page.status_code == 200
    text = page.text
    suites = re.findall(r'data-suite="([^"]+)" data-testid="suite-overview"', text)
    assert suites == ["page-touch", "search-tree", "storage"]
    tree = text[text.index('data-suite="search-tree"') : text.index('data-suite="storage"')]
    assert f'href="/runs/{latest}">#{latest}</a>' in tree
    assert "LIBXAC against Berkeley DB" in tree and "LIBXAC against LMDB" in tree
    # One forest plot per other system; each pair is a labelled row with its verdict.
    assert tree.count('data-testid="forest"') == 2
    assert (
        "LIBXAC advisory no · block bytes 0 · tree cobtree against Berkeley DB mode nosync" in tree
    )
    assert tree.count('data-outcome="') == 3 * 2 * 2 + 3 * 2
    # Every measure with its trend over both runs, oldest first, and a link to its history.
    assert "the last 2 runs, oldest first" in tree
    assert tree.count('class="sparkline"') >= 12
    touch = text[text.index('data-suite="page-touch"') : text.index('data-suite="search-tree"')]
    assert (
        "operating system: no run of this epoch measured it on a workload LIBXAC ran too "
        "(different benchmarks: LIBXAC fit or page_touch, operating system mprotect or "
        "sigsegv_mprotect or sigsegv_roundtrip)" in touch
    )
    storage = text[text.index('data-suite="storage"') :]
    assert "measured no LIBXAC" in storage
    assert 'href="/history?' in storage


def _baselines_durable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A search-tree run from before the suite declared its default durability: each program
    kept its own, the LIBXAC trees nondurable and the baselines durable."""
    for record in records:
        if record["sut"] != "libxac":
            record["params"] = {**record["params"], "durability": "durable", "mode": "durable"}
    return records


def test_a_latest_run_with_no_common_workload_falls_back_and_says_why(
    client: TestClient,
) -> None:
    machine_id, agent = register_machine(client, "lab-fallback", FINGERPRINT)
    alike = store_results(client, machine_id, agent, "search-tree", search_tree_records(seed=5))
    latest = store_results(
        client, machine_id, agent, "search-tree", _baselines_durable(search_tree_records(seed=6))
    )
    text = client.get(f"/machines/{machine_id}").text
    assert f'href="/runs/{latest}">#{latest}</a>' in text
    # The comparisons come from the earlier run in which both ran alike, and say so and why.
    assert text.count('data-testid="forest"') == 2
    assert (
        f"From run #{alike}, the latest run of this epoch in which LIBXAC and Berkeley DB ran a "
        f"common workload: in the latest run, #{latest}, they ran none (durability: LIBXAC "
        "nondurable, Berkeley DB durable)." in text
    )
    assert f"compare?kind=sut&amp;a=bdb&amp;b=libxac&amp;run={alike}" in text

    alone, agent = register_machine(client, "lab-unpaired", FINGERPRINT)
    store_results(client, alone, agent, "search-tree", _baselines_durable(search_tree_records()))
    text = client.get(f"/machines/{alone}").text
    assert 'data-testid="forest"' not in text
    assert (
        "LMDB: no run of this epoch measured it on a workload LIBXAC ran too (durability: "
        "LIBXAC nondurable, LMDB durable)" in text
    )


def test_an_overview_is_per_epoch(client: TestClient) -> None:
    machine_id, agent = register_machine(client, "lab-epochs", FINGERPRINT)
    store_results(client, machine_id, agent, "storage", storage_records())
    _same, agent = register_machine(client, "lab-epochs", fingerprint(kernel={"release": "6.12.9"}))
    store_results(client, machine_id, agent, "search-tree", search_tree_records())
    now = client.get(f"/machines/{machine_id}").text
    assert 'data-suite="search-tree"' in now and 'data-suite="storage"' not in now
    before = client.get(f"/machines/{machine_id}?epoch=1").text
    assert 'data-suite="storage"' in before and 'data-suite="search-tree"' not in before
    assert "changed: kernel.release" in before
    assert client.get(f"/machines/{machine_id}?epoch=3").status_code == 404
    assert client.get("/machines/424242").status_code == 404
    assert client.get("/machines/99999999999").status_code == 404


def test_the_machines_page_links_each_overview(client: TestClient) -> None:
    machine_id, _agent = register_machine(client, "lab-linked-overview")
    page = client.get("/machines").text
    assert f'<a href="/machines/{machine_id}" data-testid="overview-lab-linked-overview">' in page
    empty = client.get(f"/machines/{machine_id}").text
    assert 'data-testid="no-results"' in empty
