"""An admin's forms on the machines page: approve a machine, rotate its agent token."""

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.helpers import AGENT, claim
from tests.ui.form_posts import post_form, rows, said
from tests.ui.test_pages import browser_login
from xaclab_server.core.security import hash_token
from xaclab_server.models import Machine


def pending_machine(client: TestClient) -> tuple[int, dict[str, str]]:
    """A machine that registered without the registration token, and its agent's headers."""
    reply = client.post(f"{AGENT}/register", json={"name": "lab-new", "fingerprint": {"cpu": "x"}})
    assert reply.status_code == 202, reply.text
    body = reply.json()
    return body["machine_id"], {"Authorization": f"Bearer {body['agent_token']}"}


def approved(app: FastAPI, machine_id: int) -> bool:
    found: bool = rows(app, select(Machine.approved).where(Machine.id == machine_id))[0]
    return found


def test_an_admin_approves_a_machine(client: TestClient, app: FastAPI) -> None:
    machine_id, agent = pending_machine(client)
    csrf = browser_login(client, app, role="admin")
    reply = post_form(client, f"/machines/{machine_id}/approve", csrf)
    assert reply.status_code == 303 and reply.headers["location"] == "/machines"
    assert approved(app, machine_id)
    assert claim(client, agent).status_code == 204  # may claim work now


def test_an_admin_rotates_the_agent_token(client: TestClient, app: FastAPI) -> None:
    machine_id, agent = pending_machine(client)
    csrf = browser_login(client, app, role="admin")
    reply = post_form(client, f"/machines/{machine_id}/rotate-token", csrf)
    assert reply.status_code == 200
    assert "New agent token for lab-new" in reply.text
    token = said(reply, "secret")
    assert rows(app, select(Machine.token_hash).where(Machine.id == machine_id)) == [
        hash_token(token)
    ]
    assert claim(client, agent).status_code == 401  # the old token no longer works


def test_an_operator_may_not_approve(client: TestClient, app: FastAPI) -> None:
    machine_id, _agent = pending_machine(client)
    csrf = browser_login(client, app, role="operator")
    reply = post_form(client, f"/machines/{machine_id}/approve", csrf)
    assert reply.status_code == 403
    assert said(reply, "refused") == "This needs the admin role; yours is operator."
    assert not approved(app, machine_id)


def test_a_stale_form_changes_nothing(client: TestClient, app: FastAPI) -> None:
    machine_id, _agent = pending_machine(client)
    browser_login(client, app, role="admin")
    before = rows(app, select(Machine.token_hash).where(Machine.id == machine_id))
    for action in ("approve", "rotate-token"):
        reply = post_form(client, f"/machines/{machine_id}/{action}", "forged")
        assert reply.status_code == 403
        assert said(reply, "refused") == "The form was stale; reload it."
    assert not approved(app, machine_id)
    assert rows(app, select(Machine.token_hash).where(Machine.id == machine_id)) == before


def test_unknown_machines_and_actions_are_404(client: TestClient, app: FastAPI) -> None:
    machine_id, _agent = pending_machine(client)
    csrf = browser_login(client, app, role="admin")
    for path in ("/machines/31337/approve", f"/machines/{machine_id}/retire"):
        reply = post_form(client, path, csrf)
        assert reply.status_code == 404 and "does not exist" in reply.text, path
    assert not approved(app, machine_id)
