"""Accounts: no anonymous writes, roles, API tokens, login sessions with CSRF, agent approval."""

from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.conftest import TEST_PASSWORD, add_user, make_settings, row_counts
from tests.helpers import AGENT, claim, create_run, register
from xaclab_server.app import create_app

RUN = {"suite": "page-touch", "profile": "quick", "params": {}}


def test_anonymous_reads_but_never_writes(client: TestClient, anonymous: TestClient) -> None:
    machine_id, _headers = register(client)
    run_id = create_run(client, machine_id)["run_id"]
    assert anonymous.get("/api/v1/machines").status_code == 200
    assert anonymous.get(f"/api/v1/runs/{run_id}").status_code == 200
    writes = [
        ("post", "/api/v1/runs", {"machine_id": machine_id, **RUN}),
        ("post", f"/api/v1/runs/{run_id}/cancel", None),
        ("post", f"/api/v1/runs/{run_id}/rerun", None),
        ("post", "/api/v1/jobs/1/cancel", None),
        ("post", "/api/v1/matrices", {"machine_ids": [machine_id], "suites": ["page-touch"]}),
        ("post", "/api/v1/tokens", {"name": "x"}),
        ("post", f"/api/v1/machines/{machine_id}/approve", None),
    ]
    for method, path, body in writes:
        reply = anonymous.request(method.upper(), path, json=body)
        assert reply.status_code == 401, (path, reply.text)
        assert "login or an API token" in reply.json()["detail"]


def test_roles(client: TestClient, app: FastAPI) -> None:
    machine_id, _headers = register(client)
    viewer = {"Authorization": f"Bearer {add_user(app, 'vera', 'viewer')}"}
    operator = {"Authorization": f"Bearer {add_user(app, 'otto', 'operator')}"}
    body = {"machine_id": machine_id, **RUN}
    reply = client.post("/api/v1/runs", json=body, headers=viewer)
    assert reply.status_code == 403
    assert reply.json()["detail"] == "This needs the operator role; vera's role is viewer."
    assert client.post("/api/v1/runs", json=body, headers=operator).status_code == 201
    reply = client.post(f"/api/v1/machines/{machine_id}/rotate-token", headers=operator)
    assert reply.status_code == 403
    assert client.get("/api/v1/users", headers=operator).status_code == 403
    # Any user may make their own tokens, even a viewer.
    assert client.post("/api/v1/tokens", json={"name": "v"}, headers=viewer).status_code == 201


def test_tokens_are_hashed_and_revocable(client: TestClient, app: FastAPI) -> None:
    created = client.post("/api/v1/tokens", json={"name": "script"}).json()
    token = created["token"]
    assert token.startswith("xu_") and created["prefix"] == token[:10]
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/v1/me", headers=headers).json()["username"] == "tester"
    with app.state.sessionmaker() as session:
        from xaclab_server.models import ApiToken

        stored = {t.token_hash for t in session.query(ApiToken)}
    assert token not in stored
    assert client.delete(f"/api/v1/tokens/{created['id']}").status_code == 200
    reply = client.get("/api/v1/me", headers=headers)
    assert reply.status_code == 401 and "revoked" in reply.json()["detail"]


def test_session_cookie_and_csrf(anonymous: TestClient, app: FastAPI, client: TestClient) -> None:
    machine_id, _headers = register(client)
    add_user(app, "olga", "operator")
    bad = anonymous.post("/api/v1/login", json={"username": "olga", "password": "wrong-password"})
    assert bad.status_code == 401
    reply = anonymous.post("/api/v1/login", json={"username": "olga", "password": TEST_PASSWORD})
    assert reply.status_code == 200
    cookie = reply.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie.replace("Lax", "lax")
    csrf = reply.json()["csrf_token"]
    body = {"machine_id": machine_id, **RUN}
    refused = anonymous.post("/api/v1/runs", json=body)
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    assert (
        anonymous.post("/api/v1/runs", json=body, headers={"X-CSRF-Token": csrf}).status_code == 201
    )
    anonymous.post("/api/v1/logout")
    assert anonymous.get("/api/v1/me").json()["username"] is None


def test_disabled_user_and_last_admin(client: TestClient, app: FastAPI) -> None:
    token = add_user(app, "dora", "operator")
    users = {u["username"]: u for u in client.get("/api/v1/users").json()}
    reply = client.patch(f"/api/v1/users/{users['dora']['id']}", json={"disabled": True})
    assert reply.status_code == 200
    assert client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    reply = client.patch(f"/api/v1/users/{users['tester']['id']}", json={"role": "viewer"})
    assert reply.status_code == 422 and "last enabled admin" in reply.json()["detail"]
    weak = client.post("/api/v1/users", json={"username": "x", "password": "short"})
    assert weak.status_code == 422 and "at least 10" in weak.json()["detail"]


def test_anonymous_read_can_be_turned_off(db_url: str) -> None:
    app = create_app(make_settings(db_url, anonymous_read=False))
    with TestClient(app) as anonymous:
        assert anonymous.get("/api/v1/machines").status_code == 401
        page = anonymous.get("/machines", follow_redirects=False)
        assert page.status_code == 303 and page.headers["location"].startswith("/login")
        assert anonymous.get("/login").status_code == 200
        assert anonymous.get("/healthz").status_code == 200


def test_pending_agent_needs_approval(client: TestClient, anonymous: TestClient) -> None:
    reply = anonymous.post(
        f"{AGENT}/register", json={"name": "lab-new", "fingerprint": {"cpu": "x"}}
    )
    assert reply.status_code == 202 and reply.json()["approved"] is False
    headers = {"Authorization": f"Bearer {reply.json()['agent_token']}"}
    refused = claim(anonymous, headers)
    assert refused.status_code == 403 and "approval" in refused.json()["detail"]
    machine_id = reply.json()["machine_id"]
    assert anonymous.post(f"/api/v1/machines/{machine_id}/approve").status_code == 401
    approved = client.post(f"/api/v1/machines/{machine_id}/approve")
    assert approved.status_code == 200 and approved.json()["approved"] is True
    assert claim(anonymous, headers).status_code == 204
    # An approved name cannot be taken over without the registration token.
    again = anonymous.post(f"{AGENT}/register", json={"name": "lab-new", "fingerprint": {}})
    assert again.status_code == 409
    wrong = anonymous.post(
        f"{AGENT}/register", json={"registration_token": "nope", "name": "x", "fingerprint": {}}
    )
    assert wrong.status_code == 401


def test_rotating_an_agent_token(client: TestClient) -> None:
    machine_id, headers = register(client)
    reply = client.post(f"/api/v1/machines/{machine_id}/rotate-token")
    assert reply.status_code == 200
    assert claim(client, headers).status_code == 401
    fresh = {"Authorization": f"Bearer {reply.json()['agent_token']}"}
    assert claim(client, fresh).status_code == 204


def test_login_form_needs_its_csrf_cookie(anonymous: TestClient, app: FastAPI) -> None:
    add_user(app, "fay", "viewer")
    reply = anonymous.post(
        "/login",
        data={"csrf_token": "forged", "username": "fay", "password": TEST_PASSWORD},
        follow_redirects=False,
    )
    assert reply.status_code == 403
    assert row_counts(app)["login_sessions"] == 0
