"""The schedules page's forms: turn a schedule off and on, delete it."""

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.helpers import register
from tests.ui.form_posts import post_form, rows, said
from tests.ui.test_pages import browser_login
from xaclab_server.models import Schedule


def nightly(client: TestClient) -> int:
    machine_id, _ = register(client)
    reply = client.post(
        "/api/v1/schedules",
        json={
            "name": "nightly",
            "cron": "0 3 * * *",
            "matrix": {"machine_ids": [machine_id], "suites": ["page-touch"]},
        },
    )
    assert reply.status_code == 201, reply.text
    schedule_id: int = reply.json()["id"]
    return schedule_id


def enabled(app: FastAPI) -> list[bool]:
    return rows(app, select(Schedule.enabled))


def test_an_operator_turns_a_schedule_off_and_on_and_deletes_it(
    client: TestClient, app: FastAPI
) -> None:
    schedule_id = nightly(client)
    csrf = browser_login(client, app)
    for action, after in (("disable", [False]), ("enable", [True]), ("delete", [])):
        reply = post_form(client, f"/schedules/{schedule_id}/{action}", csrf)
        assert reply.status_code == 303 and reply.headers["location"] == "/schedules"
        assert enabled(app) == after, action


def test_a_viewer_may_not_change_a_schedule(client: TestClient, app: FastAPI) -> None:
    schedule_id = nightly(client)
    csrf = browser_login(client, app, role="viewer")
    for action in ("disable", "delete"):
        reply = post_form(client, f"/schedules/{schedule_id}/{action}", csrf)
        assert reply.status_code == 403
        assert said(reply, "refused") == "This needs the operator role; yours is viewer."
    assert enabled(app) == [True]


def test_unknown_schedules_and_actions_are_404(client: TestClient, app: FastAPI) -> None:
    schedule_id = nightly(client)
    csrf = browser_login(client, app)
    for path in ("/schedules/31337/disable", f"/schedules/{schedule_id}/pause"):
        reply = post_form(client, path, csrf)
        assert reply.status_code == 404 and "does not exist" in reply.text, path
    assert enabled(app) == [True]
