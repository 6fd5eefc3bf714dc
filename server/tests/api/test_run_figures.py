"""A run's figures (GET /api/v1/runs/{id}/charts and the run page): charts that fit the data,
every series named by its system, single values in tables, no anonymous axis."""

import json
import math
from typing import Any

from fastapi.testclient import TestClient

from tests.lab_data import FIT, FLOORS, page_touch_records, search_tree_records
from tests.reproduction_helpers import register_machine, store_results


def _figures(client: TestClient, run_id: int) -> dict[str, Any]:
    reply = client.get(f"/api/v1/runs/{run_id}/charts")
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


def _figure(body: dict[str, Any], benchmark: str, metric: str, kind: str) -> dict[str, Any]:
    for section in body["sections"]:
        for figure in section["figures"]:
            if (figure["benchmark"], figure["metric"], figure["kind"]) == (benchmark, metric, kind):
                found: dict[str, Any] = figure
                return found
    raise AssertionError(f"no {kind} figure of {benchmark} {metric}")


def test_search_tree_figures_name_every_system_and_draw_distributions(client: TestClient) -> None:
    machine_id, agent = register_machine(client, "lab-trees")
    records = search_tree_records(seed=3)
    run_id = store_results(client, machine_id, agent, "search-tree", records)
    body = _figures(client, run_id)
    assert [s["benchmark"] for s in body["sections"]] == ["insert"]
    assert body["sections"][0]["title"] == "insert: LIBXAC, Berkeley DB, LMDB"

    throughput = _figure(body, "insert", "throughput", "dots")
    labels = [s["label"] for s in throughput["series"]]
    assert labels == [
        "LIBXAC · advisory no · block bytes 4096 · tree btree",
        "LIBXAC · advisory yes · block bytes 4096 · tree btree",
        "LIBXAC · advisory no · block bytes 0 · tree cobtree",
        "Berkeley DB · mode not_durable",
        "Berkeley DB · mode nosync",
        "LMDB",
    ]
    assert throughput["x_title"] == "throughput (operations/s; higher is better)"
    # What every result shares is said once, not on every row.
    assert "count 2000" in throughput["common"] and "procs 1" in throughput["common"]
    # One colour per system (variants are shades of it), the same on every figure.
    colours = {s["system"]: s["colour"] for s in throughput["series"] if not s["variant"]}
    assert colours == {"lmdb": "#009E73"}
    assert throughput["series"][0]["colour"] == "#0072B2"
    assert throughput["series"][3]["colour"] == "#D55E00"
    for series in throughput["series"]:
        (mark,) = series["marks"]
        stored = [
            r for r in records if r["sut"] == series["system"] and r["metric"] == "throughput"
        ]
        assert mark["n"] == 6 and mark["interval"] == "median_ci"
        assert mark["low"] <= mark["y"] <= mark["high"]
        assert any(
            math.isclose(mark["y"], sorted(r["samples"])[2] / 2 + sorted(r["samples"])[3] / 2)
            for r in stored
        )

    percentiles = _figure(body, "insert", "insert_latency", "percentiles")
    assert [t["label"] for t in percentiles["x_ticks"]] == ["p50", "p90", "p99", "max"]
    libxac = next(s for s in percentiles["series"] if s["system"] == "libxac")
    samples = sorted(next(r for r in records if r["metric"] == "insert_latency")["samples"])
    # Nearest rank: p50 of 400 samples is the 200th, p99 the 396th; max the largest.
    assert [m["y"] for m in libxac["marks"]] == [
        samples[199],
        samples[359],
        samples[395],
        samples[399],
    ]
    assert percentiles["y_scale"] == "log"

    top = _figure(body, "insert", "insert_latency", "top_k")
    assert top["x_title"] == "k (1: the most expensive sample)"
    first = top["series"][0]["marks"]
    assert [m["x"] for m in first[:3]] == [1.0, 2.0, 3.0]
    assert [m["y"] for m in first] == sorted(samples, reverse=True)
    # The program's own top-100 adds nothing the k-th most expensive of every sample lacks.
    metrics = {f["metric"] for s in body["sections"] for f in s["figures"]}
    assert "insert_latency_top" not in metrics
    assert "combination" not in json.dumps(body)


def test_page_touch_draws_the_floor_and_the_fitted_model(client: TestClient) -> None:
    machine_id, agent = register_machine(client, "lab-touch")
    run_id = store_results(client, machine_id, agent, "page-touch", page_touch_records(seed=4))
    body = _figures(client, run_id)
    lines = _figure(body, "page_touch", "time_per_page", "lines")
    assert lines["x_title"] == "n: pages each transaction touches"
    assert lines["x_scale"] == "log"
    assert [r["label"] for r in lines["references"]] == [
        f"operating system: {name}" for name in FLOORS
    ]
    assert all(r["colour"] == "#000000" for r in lines["references"])
    # One colour for every floor, so a dash pattern each tells them apart.
    assert len({r["dash"] for r in lines["references"]}) == len(FLOORS)
    for reference in lines["references"]:
        centre = FLOORS[reference["label"].split(": ")[1]]
        assert abs(reference["value"] / centre - 1) < 0.05
    # The fitted model over each series: time per page = slope + c / n.
    assert len(lines["curves"]) == 4
    read = next(
        c for c in lines["curves"] if c["label"].startswith("LIBXAC · access read · advisory no")
    )
    slope, c = FIT["read"]
    assert read["xs"][0] == 1.0 and read["xs"][-1] == 64.0
    assert all(math.isclose(y, slope + c / x) for x, y in zip(read["xs"], read["ys"], strict=True))
    # The floors and the model's coefficients are single values, not charts.
    singles = {(v["benchmark"], v["metric"]) for s in body["sections"] for v in s["single_values"]}
    assert {(b, "time_per_page") for b in FLOORS} <= singles
    assert ("fit", "c") in singles and ("fit", "r2") in singles
    fit_section = next(s for s in body["sections"] if s["benchmark"] == "fit")
    assert fit_section["figures"] == []

    page = client.get(f"/runs/{run_id}").text
    assert "operating system: sigsegv_roundtrip" in page
    assert 'class="axis-title x-title"' in page and "n: pages each transaction touches" in page
    assert "parameter combination" not in page


def test_single_values_go_in_tables_with_their_intervals(client: TestClient) -> None:
    machine_id, agent = register_machine(client, "lab-durable")
    records = search_tree_records(seed=5, durability="durable")
    run_id = store_results(client, machine_id, agent, "search-tree", records)
    body = _figures(client, run_id)
    # log_syncs_per_insert: one value per tree, three values in all: a dot plot of three rows,
    # each marked as a single sample (no whiskers).
    syncs = _figure(body, "insert", "log_syncs_per_insert", "dots")
    assert all(m["interval"] == "none" and m["n"] == 1 for s in syncs["series"] for m in s["marks"])
    assert "A mark without whiskers is a single sample." in syncs["notes"]


def test_history_links_of_a_run_lead_to_its_series(client: TestClient) -> None:
    machine_id, agent = register_machine(client, "lab-linked")
    run_id = store_results(client, machine_id, agent, "search-tree", search_tree_records(seed=6))
    body = _figures(client, run_id)
    mark = _figure(body, "insert", "throughput", "dots")["series"][-1]["marks"][0]
    reply = client.get(mark["history_url"].replace("/history", "/api/v1/history", 1))
    assert reply.status_code == 200, reply.text
    history = reply.json()
    assert history["system_title"] == "LMDB"
    assert [p["run_id"] for p in history["points"]] == [run_id]


def test_a_param_on_which_the_systems_differ_is_in_their_labels(client: TestClient) -> None:
    """A search-tree run from before the suite's default durability: each program kept its own,
    the LIBXAC trees nondurable and the baselines durable.  The labels say so; no row hides it."""
    machine_id, agent = register_machine(client, "lab-trees-apart")
    records = search_tree_records(seed=7)
    for record in records:
        if record["sut"] != "libxac":
            record["params"] = {**record["params"], "durability": "durable"}
    run_id = store_results(client, machine_id, agent, "search-tree", records)
    throughput = _figure(_figures(client, run_id), "insert", "throughput", "dots")
    labels = [s["label"] for s in throughput["series"]]
    assert labels == [
        "LIBXAC · advisory no · block bytes 4096 · durability nondurable · tree btree",
        "LIBXAC · advisory yes · block bytes 4096 · durability nondurable · tree btree",
        "LIBXAC · advisory no · block bytes 0 · durability nondurable · tree cobtree",
        "Berkeley DB · durability durable · mode not_durable",
        "Berkeley DB · durability durable · mode nosync",
        "LMDB · durability durable",
    ]
    assert "durability" not in throughput["common"]


def test_a_label_names_what_sets_its_row_apart_not_every_knob(client: TestClient) -> None:
    """The serial trees of tree_blocks beside the transactional B+-tree: LIBXAC's knobs
    (writers, escalate_after ...) are recorded by the transactional tree only.  They do not
    tell its row from the serial ones (version does), so its label leaves them out, until two
    rows differ in one."""
    machine_id, agent = register_machine(client, "lab-knobs")
    knobs = {"writers": 4, "escalate_after": 8, "keep_pages": True}
    rows: list[dict[str, Any]] = [
        {"block_bytes": 4096, "tree": "btree", "version": "serial"},
        {"block_bytes": 8192, "tree": "btree", "version": "serial"},
        {"block_bytes": 4096, "tree": "btree", "version": "transactional", **knobs},
    ]
    records = [r for r in search_tree_records(seed=9) if r["sut"] != "libxac"]
    template = next(r for r in search_tree_records(seed=9) if r["metric"] == "throughput")
    for index, params in enumerate(rows):
        record = json.loads(json.dumps(template))
        record["params"] = {**record["params"], "advisory": False, **params}
        record["samples"] = [1000.0 * (index + 1) + i for i in range(6)]
        records.append(record)
    run_id = store_results(client, machine_id, agent, "search-tree", records)
    labels = [
        s["label"]
        for s in _figure(_figures(client, run_id), "insert", "throughput", "dots")["series"]
    ]
    assert labels[:3] == [
        "LIBXAC · block bytes 4096 · version serial",
        "LIBXAC · block bytes 8192 · version serial",
        "LIBXAC · block bytes 4096 · version transactional",
    ]
    # Two transactional rows that differ in a knob: the knob is named, the others are not.
    second = json.loads(json.dumps(records[-1]))
    second["params"]["writers"] = 2
    second["samples"] = [9000.0 + i for i in range(6)]
    run_id = store_results(client, machine_id, agent, "search-tree", [*records, second])
    labels = [
        s["label"]
        for s in _figure(_figures(client, run_id), "insert", "throughput", "dots")["series"]
    ]
    assert "LIBXAC · block bytes 4096 · version transactional · writers 4" in labels
    assert "LIBXAC · block bytes 4096 · version transactional · writers 2" in labels
    assert not [label for label in labels if "escalate" in label or "keep pages" in label]
