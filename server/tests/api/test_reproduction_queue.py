"""Reproducing the thesis in one action: the API call and the thesis page's button queue the
plan's matrices on the chosen machine, and the page says how long they will take."""

from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.conftest import add_user
from tests.reproduction_helpers import register_machine
from tests.ui.form_posts import post_form, said
from tests.ui.test_pages import browser_login


def test_the_api_queues_every_matrix_the_tables_need(client: TestClient, app: FastAPI) -> None:
    machine_id, _agent = register_machine(client, "lab-reproduce")
    reply = client.post(f"/api/v1/machines/{machine_id}/reproduction/queue")
    assert reply.status_code == 201, reply.text
    body = reply.json()
    assert len(body["matrices"]) == 9 and body["jobs"] == 11
    assert body["unestimated_jobs"] == 11 and body["estimated_seconds"] == 0
    queued = client.get("/api/v1/queue").json()
    params = sorted((j["suite"], sorted(j["params"].items())) for j in queued)
    assert ("storage", [("write_cache", "off")]) in params
    durable_trees = [
        dict(p)
        for suite, p in params
        if suite == "search-tree" and dict(p)["durability"] == "durable"
    ]
    assert sorted((p["procs"], p["write_cache"]) for p in durable_trees) == [
        (1, "off"),
        (1, "on"),
        (2, "off"),
    ]
    assert all(p["count"] == 250_000 and p["tree"] == "all" for p in durable_trees)
    viewer = add_user(app, "reproduce-viewer", "viewer")
    refused = client.post(
        f"/api/v1/machines/{machine_id}/reproduction/queue",
        headers={"Authorization": f"Bearer {viewer}"},
    )
    assert refused.status_code == 403
    assert client.post("/api/v1/machines/424242/reproduction/queue").status_code == 404


def test_the_thesis_page_queues_the_plan_with_one_button(client: TestClient, app: FastAPI) -> None:
    machine_id, _agent = register_machine(client, "lab-one-action")
    csrf = browser_login(client, app)
    shown = client.get(f"/reproduction?machine_id={machine_id}")
    page = shown.text
    assert 'data-testid="reproduce-plan"' in page
    assert "Queue all 11 jobs on lab-one-action" in page
    assert "11 jobs have no estimate: no job of their suite and profile ran before" in page
    # A new machine still learns roughly how long: the last full run, labelled as elsewhere.
    assert said(shown, "reproduce-reference").startswith(
        "the whole plan took 66 minutes on xaclab's development VM"
    )
    reply = post_form(client, "/reproduction/queue", csrf, machine_id=str(machine_id))
    assert reply.status_code == 303
    assert reply.headers["location"] == f"/reproduction?machine_id={machine_id}&queued=11"
    done = client.get(reply.headers["location"])
    assert "Queued 11 jobs on lab-one-action" in said(done, "reproduce-queued")
    assert len(client.get("/api/v1/queue").json()) == 11
    missing = post_form(client, "/reproduction/queue", csrf, machine_id="424242")
    assert missing.status_code == 404
