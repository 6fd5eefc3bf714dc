"""The run forms: queue a run, and cancel or re-run one."""

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.conftest import row_counts
from tests.helpers import create_run, register
from tests.ui.form_posts import post_form, rows, said
from tests.ui.test_pages import browser_login
from xaclab_server.models import Job, Run

RUN_FORM = {"suite": "page-touch", "page-touch.profile": "quick"}


def job_states(app: FastAPI, run_id: int) -> list[str]:
    return rows(app, select(Job.status).where(Job.run_id == run_id).order_by(Job.id))


def test_the_run_form_refuses_an_unknown_machine_and_keeps_the_form(
    client: TestClient, app: FastAPI
) -> None:
    register(client)
    csrf = browser_login(client, app)
    reply = post_form(
        client,
        "/runs/new",
        csrf,
        machine_id="31337",
        **RUN_FORM,
        **{"page-touch.param.repetitions": "7"},
    )
    assert reply.status_code == 422
    assert said(reply, "form-error") == "Machine 31337 does not exist."
    assert 'name="page-touch.param.repetitions" value="7"' in reply.text
    assert '<option value="page-touch" selected>' in reply.text
    assert row_counts(app)["runs"] == 0


def test_the_run_form_needs_a_machine(client: TestClient, app: FastAPI) -> None:
    register(client)
    csrf = browser_login(client, app)
    reply = post_form(client, "/runs/new", csrf, machine_id="", **RUN_FORM)
    assert reply.status_code == 422 and said(reply, "form-error") == "Choose a machine."
    reply = post_form(client, "/runs/new", csrf, machine_id="1", suite="no-such-suite")
    assert (
        reply.status_code == 422 and said(reply, "form-error") == "Unknown suite 'no-such-suite'."
    )
    assert row_counts(app)["runs"] == 0


def test_a_viewer_may_not_queue_a_run(client: TestClient, app: FastAPI) -> None:
    machine_id, _agent = register(client)
    csrf = browser_login(client, app, role="viewer")
    reply = post_form(client, "/runs/new", csrf, machine_id=str(machine_id), **RUN_FORM)
    assert reply.status_code == 403
    assert said(reply, "refused") == "This needs the operator role; yours is viewer."
    assert row_counts(app)["runs"] == 0


def test_nobody_logged_in_is_sent_to_the_login(anonymous: TestClient, app: FastAPI) -> None:
    reply = post_form(anonymous, "/runs/new", "", machine_id="1", **RUN_FORM)
    assert reply.status_code == 303
    assert reply.headers["location"] == "/login?next=%2Fruns%2Fnew"
    assert row_counts(app)["runs"] == 0


def test_an_operator_cancels_a_run(client: TestClient, app: FastAPI) -> None:
    machine_id, _agent = register(client)
    run_id = create_run(client, machine_id)["run_id"]
    csrf = browser_login(client, app)
    reply = post_form(client, f"/runs/{run_id}/cancel", csrf)
    assert reply.status_code == 303 and reply.headers["location"] == f"/runs/{run_id}"
    assert job_states(app, run_id) == ["cancelled"]


def test_an_operator_reruns_a_run(client: TestClient, app: FastAPI) -> None:
    machine_id, _agent = register(client)
    run_id = create_run(client, machine_id, repetitions=3)["run_id"]
    csrf = browser_login(client, app)
    reply = post_form(client, f"/runs/{run_id}/rerun", csrf)
    assert reply.status_code == 303
    copy_id = int(reply.headers["location"].rsplit("/", 1)[1])
    assert copy_id != run_id
    copy = rows(app, select(Run).where(Run.id == copy_id))[0]
    assert (copy.machine_id, copy.suite, copy.params) == (
        machine_id,
        "page-touch",
        {"repetitions": 3},
    )
    assert job_states(app, copy_id) == ["queued"]


def test_a_viewer_may_not_cancel_or_rerun(client: TestClient, app: FastAPI) -> None:
    machine_id, _agent = register(client)
    run_id = create_run(client, machine_id)["run_id"]
    csrf = browser_login(client, app, role="viewer")
    for action in ("cancel", "rerun"):
        reply = post_form(client, f"/runs/{run_id}/{action}", csrf)
        assert reply.status_code == 403
        assert said(reply, "refused") == "This needs the operator role; yours is viewer."
    assert job_states(app, run_id) == ["queued"]
    assert row_counts(app)["runs"] == 1


def test_unknown_runs_and_actions_are_404(client: TestClient, app: FastAPI) -> None:
    machine_id, _agent = register(client)
    run_id = create_run(client, machine_id)["run_id"]
    csrf = browser_login(client, app)
    for path in ("/runs/31337/cancel", f"/runs/{run_id}/pause"):
        reply = post_form(client, path, csrf)
        assert reply.status_code == 404 and "does not exist" in reply.text, path
    assert job_states(app, run_id) == ["queued"]


def test_the_run_form_names_a_suites_default(client: TestClient, app: FastAPI) -> None:
    """search-tree declares durability nondurable for every program; a parameter without a
    declared default keeps each program's own."""
    register(client)
    browser_login(client, app)
    page = client.get("/runs/new").text
    durability = page[page.index('id="search-tree.param.durability"') :]
    assert durability[: durability.index("</select>")].count("<option") == 3
    assert '<option value="">(the suite\'s default: nondurable)</option>' in durability
    order = page[page.index('id="search-tree.param.order"') :]
    assert order.split("</option>", 1)[0].endswith('<option value="">(program default)')
