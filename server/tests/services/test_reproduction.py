"""Building the thesis-reproduction report from stored results (services/reproduction.py).

Results go in through the agent API, as an agent would send them, on SQLite
and PostgreSQL; the report is read back as JSON from the user API.
"""

import math
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.helpers import result_record
from tests.reproduction_helpers import os_result, register_machine, store_results, touch
from xaclab_server.services.reproduction import REPORT_TABLES
from xaclab_server.services.reproduction_machine import describe_fingerprint


def report(client: TestClient, machine_id: int) -> dict[str, Any]:
    reply = client.get(f"/api/v1/machines/{machine_id}/reproduction")
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


def row(body: dict[str, Any], table: str, column: str, **identity: Any) -> dict[str, Any]:
    found = [
        r
        for t in body["tables"]
        if t["table"] == table
        for r in t["rows"]
        if r["column"] == column and all(r["identity"].get(k) == v for k, v in identity.items())
    ]
    assert len(found) == 1, (table, column, identity, len(found))
    one: dict[str, Any] = found[0]
    return one


def thesis(r: dict[str, Any], machine: str) -> dict[str, Any]:
    cell: dict[str, Any] = next(c for c in r["thesis"] if c["machine"] == machine)
    return cell


def mean(samples: list[float]) -> float:
    return sum(samples) / len(samples)


def test_a_machine_without_results_is_not_measured_anywhere(client: TestClient) -> None:
    machine_id, _agent = register_machine(client, "lab-empty")
    body = report(client, machine_id)
    assert [t["table"] for t in body["tables"]] == list(REPORT_TABLES)
    assert body["measured"] == 0
    assert body["total"] == sum(len(t["rows"]) for t in body["tables"]) > 100
    for table in body["tables"]:
        for r in table["rows"]:
            assert r["lab"] is None and r["status"] == "missing"
            assert r["missing"].startswith("not measured yet"), r
    first = row(body, "4.2", "t_read_normal")
    assert "no time_per_page result of page-touch / page_touch (libxac)" in first["missing"]
    assert first["missing"].endswith("; run the page-touch suite")
    # The thesis's side is there all the same, converted and named.
    assert math.isclose(thesis(first, "1")["value"], 36.6667, rel_tol=1e-4)
    assert thesis(first, "1")["printed"] == 110.0 and first["thesis_unit"] == "kcycles"
    names = {m["name"]: m for m in body["thesis_machines"]}
    assert "Pentium 4" in names["1"]["description"] and names["4"]["clock_ghz"] == 0.3


def test_page_touch_rows_show_lab_values_beside_the_thesis(client: TestClient) -> None:
    machine_id, agent = register_machine(client, "lab-touch")
    samples = {
        ("read", False): [7.0, 7.2, 6.8],
        ("read", True): [2.5, 2.4, 2.6],
        ("write", False): [12.0, 12.5, 11.5],
        ("write", True): [7.7, 7.8, 7.6],
    }
    records = [touch(a, adv, s) for (a, adv), s in samples.items()]
    records.append(touch("read", False, [99.0], n=512))  # another n: not table 4.2's
    run_id = store_results(client, machine_id, agent, "page-touch", records)
    body = report(client, machine_id)

    normal = row(body, "4.2", "t_read_normal")
    assert normal["status"] == "measured" and normal["unit"] == "us"
    assert math.isclose(normal["lab"]["value"], mean(samples[("read", False)]))
    assert normal["lab"]["run_ids"] == [run_id] and normal["lab"]["n"] == 3
    assert normal["params"] == {
        "access": "read",
        "advisory": False,
        "durability": "nondurable",
        "n": 1024,
    }
    # Machine 2 (2.4 GHz) printed 44.4 thousand cycles: 18.5 us.
    m2 = thesis(normal, "2")
    assert math.isclose(m2["value"], 18.5, rel_tol=1e-9)
    assert math.isclose(m2["ratio"], 7.0 / 18.5, rel_tol=1e-9)

    speedup = row(body, "4.2", "read_speedup_pct")
    assert speedup["status"] == "derived" and speedup["unit"] == "%"
    expected = 100 * (7.0 - 2.5) / 7.0
    assert math.isclose(speedup["lab"]["value"], expected, rel_tol=1e-9)
    assert math.isclose(thesis(speedup, "1")["difference"], expected - 47, rel_tol=1e-9)
    assert thesis(speedup, "1")["ratio"] is None

    actual = row(body, "4.6", "write_actual", advisory=True)
    assert math.isclose(actual["lab"]["value"], 7.7)
    estimate = row(body, "4.6", "write_est", advisory=True)
    assert estimate["status"] == "missing"
    assert "needs memcpy" in estimate["missing"] and "page_fault" in estimate["missing"]


def test_the_newest_matching_result_wins(client: TestClient) -> None:
    machine_id, agent = register_machine(client, "lab-newest")
    store_results(client, machine_id, agent, "page-touch", [touch("read", False, [10.0])])
    newer = store_results(client, machine_id, agent, "page-touch", [touch("read", False, [8.0])])
    store_results(  # newest of all, but a durable one: table 4.2 is nondurable
        client,
        machine_id,
        agent,
        "page-touch",
        [touch("read", False, [50.0], durability="durable")],
    )
    body = report(client, machine_id)
    normal = row(body, "4.2", "t_read_normal")
    assert normal["lab"]["value"] == 8.0 and normal["lab"]["run_ids"] == [newer]


def test_a_result_with_other_params_is_named_as_the_closest(client: TestClient) -> None:
    machine_id, agent = register_machine(client, "lab-near")
    run_id = store_results(
        client,
        machine_id,
        agent,
        "storage",
        [os_result("msync_fsync", "fsync_time", [300.0, 310.0], unit="us", pages=1000)],
    )
    body = report(client, machine_id)
    fsync = row(body, "4.8", "mean", operation="fsync")
    assert fsync["lab"] is None
    assert fsync["missing"].startswith("not measured yet with pages=10000, write_cache=off")
    assert f"(run {run_id})" in fsync["missing"]
    assert "pages=1000 (wanted 10000)" in fsync["missing"]
    assert "write_cache=(unset) (wanted off)" in fsync["missing"]


def test_a_jobs_factors_count_as_params_and_ms_are_converted(client: TestClient) -> None:
    machine_id, agent = register_machine(client, "lab-fsync")
    samples = [4000.0, 6000.0, 5000.0]
    store_results(
        client,
        machine_id,
        agent,
        "storage",
        [os_result("msync_fsync", "fsync_time", samples, unit="us", pages=10000)],
        params={"write_cache": "off"},
    )
    body = report(client, machine_id)
    fsync = row(body, "4.8", "mean", operation="fsync")
    assert fsync["unit"] == "ms" and fsync["status"] == "measured"
    assert math.isclose(fsync["lab"]["value"], 5.0)
    assert math.isclose(thesis(fsync, "1")["ratio"], 5.0 / 13.6)
    spread = row(body, "4.8", "stdev", operation="fsync")
    assert math.isclose(spread["lab"]["value"], 1.0)  # sample stdev of 4, 6, 5 ms
    assert thesis(fsync, "3(b)")["value"] == 4.7


def test_cycles_are_shown_as_times_and_on_this_machines_clock(client: TestClient) -> None:
    machine_id, agent = register_machine(
        client, "lab-clock", {"cpu": {"model": "Clocked CPU", "cores": 4, "max_freq_mhz": 2000}}
    )
    records = [
        os_result("sigsegv_roundtrip", "segv_enter_time", [1000.0, 1200.0]),
        os_result("sigsegv_roundtrip", "segv_exit_time", [2000.0]),
        os_result("sigsegv_roundtrip", "mmap_time", [500.0]),
        os_result("first_touch", "first_touch_time", [700.0], access="write"),
        os_result(
            "memcpy_page", "memcpy_time", [100.0], copy="repeated", copies=1000, page_bytes=4096
        ),
    ]
    store_results(client, machine_id, agent, "storage", records)
    body = report(client, machine_id)
    assert body["machine"]["clock_ghz"] == 2.0
    assert body["machine"]["name"] == "lab-clock"
    assert "Clocked CPU, 4 cores, 2.00 GHz max" in body["machine"]["description"]

    enter = row(body, "4.3", "segv_enter_cycles")
    assert enter["unit"] == "ns" and enter["thesis_unit"] == "cycles"
    assert enter["lab"]["value"] == 1100.0
    assert enter["lab"]["in_thesis_unit"] == 2200.0  # 1100 ns at 2 GHz
    assert math.isclose(thesis(enter, "2")["value"], 8032 / 2.4)
    mmap_us = row(body, "4.3", "mmap_us")
    assert mmap_us["unit"] == "us" and mmap_us["lab"]["value"] == 0.5
    assert mmap_us["lab"]["in_thesis_unit"] is None

    # Equations 4.1 and 4.2 over this machine's own numbers, in us.
    read_est = row(body, "4.6", "read_est", advisory=False)
    assert read_est["status"] == "derived"
    assert math.isclose(read_est["lab"]["value"], (1100 + 2000 + 2 * 500 + 700) / 1000)
    assert math.isclose(read_est["lab"]["in_thesis_unit"], 4.8 * 2.0)  # kcycles at 2 GHz
    write_est = row(body, "4.6", "write_est", advisory=True)
    assert math.isclose(write_est["lab"]["value"], (2 * 500 + 700 + 100) / 1000)
    assert len(write_est["lab"]["result_ids"]) == 3
    one_sample = row(body, "4.3", "segv_exit_cycles")
    assert one_sample["lab"]["n"] == 1


def test_a_standard_deviation_of_one_sample_is_not_measured(client: TestClient) -> None:
    machine_id, agent = register_machine(client, "lab-one")
    store_results(
        client,
        machine_id,
        agent,
        "storage",
        [os_result("page_checksum", "checksum_time", [23000.0], algorithm="sha1")],
    )
    body = report(client, machine_id)
    assert row(body, "C.8", "mean", hash="SHA1")["lab"]["value"] == 23000.0
    spread = row(body, "C.8", "stdev", hash="SHA1")
    assert spread["lab"] is None and "too few for a stdev" in spread["missing"]


def test_tree_inserts_turn_throughput_into_time_per_insert(client: TestClient) -> None:
    machine_id, agent = register_machine(client, "lab-trees")

    def insert(sut: str, per_second: float, procs: int, **params: Any) -> dict[str, Any]:
        return result_record(
            benchmark="insert",
            sut=sut,
            metric="throughput",
            unit="ops/s",
            better="higher",
            params={"count": 250000, "procs": procs, "durability": "durable", **params},
            samples=[per_second, per_second],
        )

    # As tree_insert prints them; a serial tree (tree_blocks' sweep) is no match.
    bplus = {"tree": "btree", "advisory": True, "block_bytes": 4096, "version": "transactional"}
    records = [
        insert("bdb", 50.0, 1),
        insert("bdb", 80.0, 2),
        insert("libxac", 100.0, 1, **bplus),
        insert("libxac", 125.0, 2, **bplus),
        insert("libxac", 1000.0, 2, **{**bplus, "version": "serial"}),
    ]
    store_results(client, machine_id, agent, "search-tree", records, params={"write_cache": "off"})
    body = report(client, machine_id)
    bdb = row(body, "5.5", "time_1proc", search_tree="Berkeley DB")
    assert bdb["unit"] == "ms" and math.isclose(bdb["lab"]["value"], 20.0)
    bplus_2 = row(body, "5.5", "time_2proc", search_tree="B+-tree, w. adv.")
    assert math.isclose(bplus_2["lab"]["value"], 8.0)
    speedup = row(body, "5.5", "speedup", search_tree="B+-tree, w. adv.")
    assert math.isclose(speedup["lab"]["value"], 10.0 / 8.0)
    vs_bdb = row(body, "5.6", "bplus_vs_bdb_1proc")
    assert math.isclose(vs_bdb["lab"]["value"], 100 * (20.0 - 10.0) / 20.0)
    assert math.isclose(thesis(vs_bdb, "1")["difference"], 50.0 - 60.0)
    cob = row(body, "5.6", "cobtree_vs_bdb_1proc")
    assert cob["lab"] is None and "cobtree_1" in cob["missing"]
    # Table C.12 wants the write cache on: these are not its results.
    assert row(body, "C.12", "berkeley_db")["lab"] is None


def test_berkeley_db_nondurable_rows_follow_each_thesis_machine(client: TestClient) -> None:
    """Table C.11: BDB was DB_TXN_NOT_DURABLE on machines 1 and 3(a), NOSYNC on 2 and 4."""
    machine_id, _agent = register_machine(client, "lab-c11")
    table = next(t for t in report(client, machine_id)["tables"] if t["table"] == "C.11")
    bdb_1 = [
        r for r in table["rows"] if r["identity"] == {"search_tree": "Berkeley DB", "procs": 1}
    ]
    assert {r["params"]["durability"] for r in bdb_1} == {"nondurable"}
    by_mode = {r["params"]["mode"]: r for r in bdb_1}
    assert set(by_mode) == {"not_durable", "nosync"}
    shown = {
        mode: {c["machine"] for c in r["thesis"] if c["value"] is not None}
        for mode, r in by_mode.items()
    }
    assert shown == {"not_durable": {"1", "3(a)"}, "nosync": {"2", "4"}}


def test_concurrency_rows_convert_us_to_the_thesis_ms(client: TestClient) -> None:
    machine_id, agent = register_machine(client, "lab-conc")

    def txn(test: str, procs: int, metric: str, unit: str, value: float) -> dict[str, Any]:
        return result_record(
            benchmark="concurrency_test",
            metric=metric,
            unit=unit,
            params={"test": test, "procs": procs, "durability": "durable", "txns": 500},
            samples=[value],
        )

    records = [
        txn("A", 1, "time_per_txn", "us", 6000.0),
        txn("A", 2, "time_per_txn", "us", 6200.0),
        txn("A", 2, "speedup", "ratio", 6000.0 / 6200.0),
    ]
    store_results(client, machine_id, agent, "concurrency", records, {"write_cache": "off"})
    body = report(client, machine_id)
    assert row(body, "4.10", "time_1proc", test="A")["lab"]["value"] == 6.0
    assert row(body, "C.10", "time_1proc", test="A")["lab"]["value"] == 6000.0
    speedup = row(body, "4.10", "speedup", test="A")
    assert math.isclose(speedup["lab"]["value"], 6000.0 / 6200.0)
    assert math.isclose(thesis(speedup, "3(a)")["ratio"], (6000.0 / 6200.0) / 0.99)
    # Nondurable table 4.9 is a different measurement.
    assert row(body, "4.9", "time_1proc", test="A")["lab"] is None


@pytest.mark.parametrize(
    ("fingerprint", "expected"),
    [
        ({}, "no fingerprint details"),
        (
            {
                "cpu": {"model": "AMD EPYC", "cores": 2, "logical_cpus": 4, "max_freq_mhz": 0},
                "memory": {"total_gib": 24},
                "os": {"pretty_name": "Debian GNU/Linux 12 (bookworm)"},
                "kernel": {"release": "6.1.0"},
                "storage": {"fstype": "ext4", "disk_models": ["virtio:virtio 0x1af4"]},
            },
            "AMD EPYC, 2 cores (4 logical); 24 GiB RAM; Debian GNU/Linux 12 (bookworm); "
            "Linux 6.1.0; ext4 on virtio:virtio 0x1af4",
        ),
    ],
)
def test_machines_are_named_from_their_fingerprint(
    fingerprint: dict[str, Any], expected: str
) -> None:
    assert describe_fingerprint(fingerprint) == expected
