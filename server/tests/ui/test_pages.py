"""Server-rendered pages, through TestClient on SQLite and PostgreSQL."""

from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.conftest import TEST_PASSWORD, add_user, row_counts
from tests.helpers import register, web_login
from tests.ui.form_posts import heading, said


def browser_login(client: TestClient, app: FastAPI, role: str = "operator") -> str:
    """Drop the test client's API token and log in with the form; return the CSRF token."""
    del client.headers["Authorization"]
    add_user(app, f"web-{role}", role)
    return web_login(client, f"web-{role}", TEST_PASSWORD)


def test_machines_page_lists_machines(client: TestClient) -> None:
    register(client, "lab-ui")
    for path in ("/", "/machines"):
        page = client.get(path)
        assert page.status_code == 200
        assert "lab-ui" in page.text
        assert "default-src 'self'" in page.headers["content-security-policy"]


def test_form_is_built_from_the_suite_declaration(client: TestClient) -> None:
    machine_id, _headers = register(client)
    page = client.get(f"/runs/new?machine_id={machine_id}").text
    assert 'name="page-touch.param.max_pages"' in page
    assert 'max="1024"' in page
    assert 'name="page-touch.profile"' in page


def test_form_submission_queues_a_run(client: TestClient, app: FastAPI) -> None:
    machine_id, _headers = register(client)
    csrf = browser_login(client, app)
    reply = client.post(
        "/runs/new",
        data={
            "csrf_token": csrf,
            "machine_id": str(machine_id),
            "suite": "page-touch",
            "page-touch.profile": "quick",
            "page-touch.param.repetitions": "3",
            "page-touch.param.max_pages": "",
        },
        follow_redirects=False,
    )
    assert reply.status_code == 303
    run_id = int(reply.headers["location"].rsplit("/", 1)[1])
    run = client.get(f"/api/v1/runs/{run_id}").json()
    assert run["params"] == {"repetitions": 3}
    page = client.get(f"/runs/{run_id}")
    assert 'id="run-status"' in page.text and 'data-testid="charts-pending"' in page.text


def test_form_refusal_shows_a_sentence_and_stores_nothing(client: TestClient, app: FastAPI) -> None:
    machine_id, _headers = register(client)
    csrf = browser_login(client, app)
    reply = client.post(
        "/runs/new",
        data={
            "csrf_token": csrf,
            "machine_id": str(machine_id),
            "suite": "page-touch",
            "page-touch.profile": "quick",
            "page-touch.param.max_pages": "5000",
        },
    )
    assert reply.status_code == 422
    assert "above its maximum 1024" in reply.text
    assert row_counts(app)["runs"] == 0


def test_a_history_link_missing_its_fields_names_them(client: TestClient) -> None:
    """A 422 is about what was asked, so its page does not say "Not allowed"."""
    machine_id, _headers = register(client)
    reply = client.get(f"/history?machine_id={machine_id}&suite=page-touch")
    assert reply.status_code == 422
    assert heading(reply) == "Not accepted"
    assert said(reply, "refused").startswith(
        "A history names its series: benchmark, sut, metric, unit missing."
    )


def test_unknown_run_page_is_404(client: TestClient) -> None:
    assert client.get("/runs/31337").status_code == 404


def test_static_assets_are_served_locally(client: TestClient) -> None:
    for path in ("/static/app.css", "/static/run.js", "/static/vendor/uPlot.iife.min.js"):
        assert client.get(path).status_code == 200, path
