"""Operations and hostile input: /metrics, security headers, escaping of every shown text."""

from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.helpers import register

XSS = "<script>alert('x')</script>' OR 1=1; DROP TABLE runs; --"


def test_metrics(client: TestClient) -> None:
    machine_id, _ = register(client)
    client.post("/api/v1/matrices", json={"machine_ids": [machine_id], "suites": ["page-touch"]})
    client.get("/api/v1/runs/424242")
    text = client.get("/metrics").text
    assert 'xaclab_jobs{status="queued"} 1.0' in text
    assert "xaclab_agents_online 1.0" in text
    assert 'route="/api/v1/runs/{run_id}"' in text and 'status="404"' in text
    assert "xaclab_ingested_samples_total" in text


def test_hostile_text_is_escaped_or_refused(client: TestClient, app: FastAPI) -> None:
    machine_id, _ = register(client)
    matrix = {"machine_ids": [machine_id], "suites": ["page-touch"]}
    reply = client.post(
        "/api/v1/schedules", json={"name": XSS, "cron": "0 3 * * *", "matrix": matrix}
    )
    assert reply.status_code == 201
    page = client.get("/schedules")
    assert "<script>alert" not in page.text and "&lt;script&gt;alert" in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    bad_user = client.post("/api/v1/users", json={"username": XSS, "password": "long-enough-pw"})
    assert bad_user.status_code == 422
    bad_run = client.post(
        "/api/v1/runs",
        json={"machine_id": machine_id, "suite": XSS, "profile": "quick", "params": {}},
    )
    assert bad_run.status_code == 422
    compare = client.get("/compare", params={"kind": "factor", "a": XSS, "b": "x", "run": "1"})
    assert "<script>alert" not in compare.text
    assert client.get("/api/v1/runs/1%20OR%201=1").status_code == 422
    tokens = client.post("/api/v1/tokens", json={"name": XSS}).json()
    assert tokens["name"] == XSS  # stored as given, shown escaped
    assert client.get("/api/v1/schedules").json()[0]["name"] == XSS
