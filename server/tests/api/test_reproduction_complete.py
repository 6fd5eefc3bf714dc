"""After "reproduce the thesis" has run, every row of the report has a lab value or says why it
cannot have one (issue N, point 8; docs/thesis-reproduction.md, "In one action").

The machine here is the lab's usual virtual one: its disk's write cache can be switched only in
the kernel's view.  Every mapping of the report gets the result its matrix would give: the
params the mapping asks for, and, where it asks for the write cache on or off, the kernel-only
setting the agent would record.  Results go in through the agent API, on SQLite and PostgreSQL.
"""

from collections import defaultdict
from typing import Any

from fastapi.testclient import TestClient

from tests.helpers import result_record
from tests.reproduction_helpers import register_machine, store_results
from tests.validity_helpers import FINGERPRINT, env, steady, write_cache
from xaclab_server.services.reproduction import REPORT_TABLES, load_report_figures
from xaclab_server.services.thesis_figures import Mapping


def _every_mapping() -> list[Mapping]:
    figures = load_report_figures()
    found: list[Mapping] = []
    for name in REPORT_TABLES:
        table = figures.tables[name]
        cells = [c for row in table.rows for c in row.cells.values() if isinstance(c, Mapping)]
        # A fitted model's mapping takes some params from each thesis row (as the report does).
        models = [
            m.mapping.with_params({p: dict(row.identity)[p] for p in m.params_from_row})
            for m in table.model
            for row in table.rows
        ]
        for mapping in [*cells, *table.refs.values(), *models]:
            if mapping not in found:
                found.append(mapping)
    return found


def _record(mapping: Mapping, index: int) -> dict[str, Any]:
    params = dict(mapping.params)
    asked = params.get("write_cache")
    cache = (
        write_cache(str(asked), str(asked), backend="kernel", disk="vda")
        if asked in ("on", "off")
        else write_cache("unchanged", "on", backend="kernel", disk="vda")
    )
    return result_record(
        benchmark=mapping.benchmark,
        sut=mapping.sut,
        metric=mapping.metric,
        unit=mapping.unit,
        params={**params, "mapping": index},  # one result per mapping, whatever else it shares
        samples=steady(10.0 + index % 7),
        env=env(cache=cache),
    )


def test_after_the_plan_every_row_has_a_value_or_says_why(client: TestClient) -> None:
    machine_id, agent = register_machine(client, "lab-virtio", FINGERPRINT)
    by_suite: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for index, mapping in enumerate(_every_mapping()):
        by_suite[mapping.suite].append(_record(mapping, index))
    for suite, records in by_suite.items():
        store_results(client, machine_id, agent, suite, records)

    body = client.get(f"/api/v1/machines/{machine_id}/reproduction").json()
    rows = [(t["table"], r) for t in body["tables"] for r in t["rows"]]
    assert len(rows) == body["total"] > 100
    missing = [
        f"{table} {r['label']}: {r['missing']}" for table, r in rows if r["status"] == "missing"
    ]
    assert missing == []
    unavailable = [(table, r) for table, r in rows if r["status"] == "unavailable"]
    # The tables of the thesis's write-cache settings, and only they, cannot be filled here.
    assert {table for table, _r in unavailable} == {
        "4.7",
        "4.8",
        "4.10",
        "C.10",
        "5.5",
        "5.6",
        "C.12",
    }
    for table, row in unavailable:
        assert row["lab"] is None and row["missing"].startswith(
            "cannot be measured on this machine: "
        ), (table, row)
    assert body["measured"] + body["unavailable"] == body["total"]
    page = client.get("/reproduction", params={"machine_id": machine_id}).text
    assert f"{body['unavailable']} cannot have one on this machine" in page
    assert "not measured yet" not in page
