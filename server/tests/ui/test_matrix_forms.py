"""The run-matrix form: queue many runs now, or on a cron schedule."""

import re

import httpx
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.conftest import row_counts
from tests.helpers import register
from tests.ui.form_posts import post_form, rows, said
from tests.ui.test_pages import browser_login
from xaclab_server.models import Job, Run, Schedule


def post_matrix(client: TestClient, csrf: str, machine_id: int, **fields: str) -> httpx.Response:
    """The matrix form with one machine and the page-touch suite ticked, and ``fields``."""
    return post_form(
        client,
        "/matrices/new",
        csrf,
        machine_ids=[str(machine_id)],
        suites=["page-touch"],
        **fields,
    )


def test_the_matrix_form_queues_its_runs(client: TestClient, app: FastAPI) -> None:
    first, _ = register(client, "lab-a")
    second, _ = register(client, "lab-b")
    csrf = browser_login(client, app)
    reply = post_form(
        client,
        "/matrices/new",
        csrf,
        machine_ids=[str(first), str(second)],
        suites=["page-touch"],
        profiles=["quick"],
        **{"factor.write_cache": ["on", "off"], "factor.procs": ""},
    )
    assert reply.status_code == 303, reply.text
    matrix_id = int(reply.headers["location"].removeprefix("/queue?matrix="))
    runs = rows(app, select(Run).where(Run.matrix_id == matrix_id))
    assert sorted(r.machine_id for r in runs) == sorted([first, second])
    params = rows(app, select(Job.params).where(Job.run_id == runs[0].id))
    assert sorted(p["write_cache"] for p in params) == ["off", "on"]


def test_with_a_cron_line_the_matrix_becomes_a_schedule(client: TestClient, app: FastAPI) -> None:
    machine_id, _ = register(client)
    csrf = browser_login(client, app)
    reply = post_matrix(client, csrf, machine_id, cron="0 3 * * *", name="nightly")
    assert reply.status_code == 303 and reply.headers["location"] == "/schedules"
    schedule = rows(app, select(Schedule))[0]
    assert (schedule.name, schedule.cron, schedule.spec["machine_ids"]) == (
        "nightly",
        "0 3 * * *",
        [machine_id],
    )
    assert row_counts(app)["runs"] == 0


def test_an_incomplete_matrix_is_refused_with_the_form_kept(
    client: TestClient, app: FastAPI
) -> None:
    machine_id, _ = register(client)
    csrf = browser_login(client, app)
    reply = post_form(client, "/matrices/new", csrf, machine_ids=[str(machine_id)])
    assert reply.status_code == 422
    assert said(reply, "form-error") == "Choose at least one machine and one suite."
    assert re.search(rf'name="machine_ids" value="{machine_id}"\s+checked>', reply.text)
    reply = post_matrix(client, csrf, machine_id, cron="61 * * * *")
    assert reply.status_code == 422 and "outside 0-59" in said(reply, "form-error")
    assert 'value="61 * * * *"' in reply.text
    assert row_counts(app)["runs"] == 0 and row_counts(app)["schedules"] == 0


def test_a_viewer_may_not_queue_a_matrix(client: TestClient, app: FastAPI) -> None:
    machine_id, _ = register(client)
    csrf = browser_login(client, app, role="viewer")
    reply = post_matrix(client, csrf, machine_id)
    assert reply.status_code == 403
    assert said(reply, "refused") == "This needs the operator role; yours is viewer."
    assert row_counts(app)["runs"] == 0 and row_counts(app)["matrices"] == 0


def test_the_forms_say_what_the_watch_profile_does_and_a_schedule_can_use_it(
    client: TestClient, app: FastAPI
) -> None:
    machine_id, _ = register(client)
    csrf = browser_login(client, app)
    for page in ("/matrices/new", "/runs/new"):
        text = client.get(page).text
        rules = re.findall(r'data-testid="profile-rule">([^<]*)<', text)
        assert any(r.startswith("watch: each result the best of 3 runs") for r in rules), page
        assert any(r.startswith("precise: run again until every median is known") for r in rules)
    reply = post_form(
        client,
        "/matrices/new",
        csrf,
        machine_ids=[str(machine_id)],
        suites=["page-touch"],
        profiles=["watch"],
        cron="0 * * * *",
        name="watched hourly",
    )
    assert reply.status_code == 303, reply.text
    assert rows(app, select(Schedule))[0].spec["profiles"] == ["watch"]
