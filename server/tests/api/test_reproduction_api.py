"""GET /api/v1/machines/{id}/reproduction: JSON, Markdown and standalone HTML; bad input."""

import re

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.conftest import add_user, make_settings
from tests.reproduction_helpers import os_result, register_machine, store_results, touch
from xaclab_server.app import create_app

XSS = "<img src=x onerror=alert(1)>"


def seeded(client: TestClient) -> int:
    machine_id, agent = register_machine(
        client, "lab-export", {"cpu": {"model": f"CPU {XSS} | [link](http://x)", "cores": 2}}
    )
    store_results(
        client,
        machine_id,
        agent,
        "page-touch",
        [touch("read", False, [7.05]), touch("read", True, [2.4])],
    )
    store_results(
        client,
        machine_id,
        agent,
        "storage",
        [os_result("sigsegv_roundtrip", "segv_enter_time", [4000.0, 5000.0])],
    )
    return machine_id


def test_json_is_the_report(client: TestClient) -> None:
    machine_id = seeded(client)
    reply = client.get(f"/api/v1/machines/{machine_id}/reproduction")
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/json"
    body = reply.json()
    assert body["machine"]["name"] == "lab-export"
    # Table 4.2: two reads and their speedup; 4.3: entering the handler; 4.6: the two reads.
    assert body["measured"] == 6
    explicit = client.get(f"/api/v1/machines/{machine_id}/reproduction", params={"format": "json"})
    assert explicit.json()["tables"] == body["tables"]


def test_markdown_is_a_document_with_both_sides(client: TestClient) -> None:
    machine_id = seeded(client)
    reply = client.get(f"/api/v1/machines/{machine_id}/reproduction?format=markdown")
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("text/markdown")
    assert reply.headers["content-disposition"] == (
        'attachment; filename="xaclab-reproduction-lab-export.md"'
    )
    text = reply.text
    assert text.startswith("# Thesis reproduction: lab-export\n")
    assert "## Table 4.2: " in text and "## Table C.12: " in text
    line = next(x for x in text.splitlines() if x.startswith("| read, normal "))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[1] == "us"
    assert cells[2].startswith("7.05 (run ")
    assert cells[3] == "36.67 (110 kcycles; lab/thesis 0.19)"  # machine 1, 3.0 GHz
    assert "**not measured yet**" in text
    # Stored text cannot make markup or break a table row.
    assert XSS not in text and r"\<img src=x onerror=alert(1)\>" in text
    assert r"\| \[link\](http://x)" in text


def test_html_is_standalone_and_escaped(client: TestClient) -> None:
    machine_id = seeded(client)
    reply = client.get(f"/api/v1/machines/{machine_id}/reproduction?format=html")
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("text/html")
    assert reply.headers["content-disposition"].endswith('.html"')
    html = reply.text
    assert html.startswith("<!doctype html>") and "<style>" in html
    # Nothing to fetch: no stylesheet, script, image or font from anywhere.
    assert not re.search(r"<(link|script|img|iframe)\b", html, re.IGNORECASE)
    assert "src=" not in html.replace("src=x onerror", "")
    assert "url(" not in html
    assert XSS not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert 'data-table="4.2"' in html and ">7.05</strong>" in html
    assert "not measured yet" in html


@pytest.mark.parametrize(
    ("path", "status", "detail"),
    [
        ("/api/v1/machines/31337/reproduction", 404, "Machine 31337 does not exist."),
        ("/api/v1/machines/0/reproduction", 422, "machine_id"),
        ("/api/v1/machines/99999999999/reproduction", 422, "machine_id"),
        ("/api/v1/machines/abc/reproduction", 422, "machine_id"),
        ("/api/v1/machines/{id}/reproduction?format=pdf", 422, "format"),
    ],
)
def test_bad_input_gets_a_sentence(client: TestClient, path: str, status: int, detail: str) -> None:
    machine_id, _agent = register_machine(client, "lab-bad")
    reply = client.get(path.replace("{id}", str(machine_id)))
    assert reply.status_code == status, reply.text
    assert detail in reply.json()["detail"]


def test_a_viewer_may_read_it_and_nobody_without_a_login(client: TestClient, app: FastAPI) -> None:
    machine_id, _agent = register_machine(client, "lab-viewer")
    viewer = add_user(app, "viewer-1", "viewer")
    path = f"/api/v1/machines/{machine_id}/reproduction?format=markdown"
    assert client.get(path, headers={"Authorization": f"Bearer {viewer}"}).status_code == 200
    closed = create_app(make_settings(app.state.settings.database_url, anonymous_read=False))
    with TestClient(closed) as anonymous:
        assert anonymous.get(path).status_code == 401
        reply = anonymous.get(path, headers={"Authorization": f"Bearer {viewer}"})
        assert reply.status_code == 200


def test_it_is_in_the_openapi_document(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    operation = schema["paths"]["/api/v1/machines/{machine_id}/reproduction"]["get"]
    assert {p["name"] for p in operation["parameters"]} == {"machine_id", "format"}
    assert set(operation["responses"]["200"]["content"]) >= {
        "application/json",
        "text/markdown",
        "text/html",
    }
