"""The audit log: every recorded action with who, from where, what, when and the outcome;
admins read it filtered and paged; it and its log lines never hold a secret."""

import json
import logging

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.conftest import REGISTRATION_TOKEN, TEST_PASSWORD, add_user
from tests.helpers import AGENT


def audit(client: TestClient, **params: object) -> list[dict[str, object]]:
    reply = client.get("/api/v1/audit", params=params)
    assert reply.status_code == 200, reply.text
    events: list[dict[str, object]] = reply.json()["events"]
    return events


def test_every_kind_of_action_is_recorded_without_secrets(
    client: TestClient, anonymous: TestClient, app: FastAPI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="xaclab_server.audit")
    secrets = [TEST_PASSWORD, REGISTRATION_TOKEN, "a-new-password-0123", "wrong-password-9"]
    # A user made, logging in (wrong, then right), logging out.
    made = client.post("/api/v1/users", json={"username": "uma", "password": "a-new-password-0123"})
    assert made.status_code == 201
    assert (
        anonymous.post(
            "/api/v1/login", json={"username": "uma", "password": "wrong-password-9"}
        ).status_code
        == 401
    )
    assert (
        anonymous.post(
            "/api/v1/login", json={"username": "uma", "password": "a-new-password-0123"}
        ).status_code
        == 200
    )
    assert anonymous.post("/api/v1/logout").status_code == 200
    # An API token made and revoked; the user changed.
    token = client.post("/api/v1/tokens", json={"name": "nightly"}).json()
    secrets.append(token["token"])
    assert client.delete(f"/api/v1/tokens/{token['id']}").status_code == 200
    assert (
        client.patch(f"/api/v1/users/{made.json()['id']}", json={"role": "operator"}).status_code
        == 200
    )
    # A machine registered pending, approved, its token rotated; one registered with the token.
    pending = anonymous.post(f"{AGENT}/register", json={"name": "lab-p", "fingerprint": {}})
    secrets.append(pending.json()["agent_token"])
    machine_id = pending.json()["machine_id"]
    assert client.post(f"/api/v1/machines/{machine_id}/approve").status_code == 200
    rotated = client.post(f"/api/v1/machines/{machine_id}/rotate-token").json()
    secrets.append(rotated["agent_token"])
    trusted = anonymous.post(
        f"{AGENT}/register",
        json={"registration_token": REGISTRATION_TOKEN, "name": "lab-t", "fingerprint": {}},
    )
    secrets.append(trusted.json()["agent_token"])

    # (The fixture's own token for "tester", made as from the command line, comes first.)
    events = [e for e in audit(client) if e["actor"] != "command line"]
    seen = [(e["action"], e["outcome"], e["actor"], e["target"]) for e in reversed(events)]
    assert seen == [
        ("user.create", "ok", "tester", "uma"),
        ("login", "failed", "uma", "uma"),
        ("login", "ok", "uma", "uma"),
        ("logout", "ok", "uma", "uma"),
        ("token.create", "ok", "tester", "tester"),
        ("token.revoke", "ok", "tester", "tester"),
        ("user.update", "ok", "tester", "uma"),
        ("machine.register", "ok", "agent lab-p", "lab-p"),
        ("machine.approve", "ok", "tester", "lab-p"),
        ("machine.rotate_token", "ok", "tester", "lab-p"),
        ("machine.register", "ok", "agent lab-t", "lab-t"),
    ]
    assert {e["address"] for e in events} == {"testclient"}
    assert all(e["at"] for e in events)
    assert events[-1]["detail"] == {"role": "viewer"}
    assert events[-2]["detail"] == {"reason": "wrong password"}
    assert events[-5]["detail"] == {"token_id": token["id"], "token_name": "nightly"}
    assert events[3]["detail"] == {"approved": False}
    # Structured log lines, one per entry, with the same facts.
    lines = [r for r in caplog.records if r.name == "xaclab_server.audit"][-len(seen) :]
    assert [(r.audit_action, r.audit_outcome) for r in lines] == [  # type: ignore[attr-defined]
        (a, o) for a, o, _who, _on in seen
    ]
    assert lines[1].audit_reason == "wrong password"  # type: ignore[attr-defined]
    # No secret anywhere: not in the entries, not in the log lines.
    written = json.dumps(events) + "".join(json.dumps(vars(r), default=str) for r in lines)
    for secret in secrets:
        assert secret not in written


def test_the_log_is_filtered_and_paged_newest_first(
    client: TestClient, anonymous: TestClient, app: FastAPI
) -> None:
    add_user(app, "pat", "viewer")
    for _ in range(5):
        anonymous.post("/api/v1/login", json={"username": "pat", "password": "wrong-password"})
    anonymous.post("/api/v1/login", json={"username": "pat", "password": TEST_PASSWORD})
    failed = audit(client, action="login", outcome="failed")
    assert len(failed) == 5 and {e["actor"] for e in failed} == {"pat"}
    pages, before = [], None
    while True:
        params: dict[str, object] = {"actor": "pat", "limit": 2}
        if before is not None:
            params["before"] = before
        reply = client.get("/api/v1/audit", params=params).json()
        pages.append([e["id"] for e in reply["events"]])
        before = reply["next_before"]
        if before is None:
            break
    ids = [i for page in pages for i in page]
    assert [len(p) for p in pages] == [2, 2, 2]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == 6
    since = audit(client, actor="pat")[0]["at"]
    assert len(audit(client, actor="pat", since=since)) >= 1
    assert audit(client, actor="pat", until="2000-01-01T00:00:00Z") == []


@pytest.mark.parametrize(
    ("params", "sentence"),
    [
        ({"action": "login.bogus"}, "action is one of"),
        ({"outcome": "maybe"}, "outcome is one of"),
        ({"since": "2026-11-24T10:00:00"}, "needs a time zone"),
        ({"limit": 501}, "limit"),
    ],
)
def test_bad_filters_are_refused_with_a_sentence(
    client: TestClient, params: dict[str, object], sentence: str
) -> None:
    reply = client.get("/api/v1/audit", params=params)
    assert reply.status_code == 422
    assert sentence in reply.json()["detail"]


def test_only_admins_read_the_audit_log(
    client: TestClient, anonymous: TestClient, app: FastAPI
) -> None:
    viewer = {"Authorization": f"Bearer {add_user(app, 'vic', 'operator')}"}
    assert anonymous.get("/api/v1/audit").status_code == 401
    assert client.get("/api/v1/audit", headers=viewer).status_code == 403
    page = client.get("/audit", headers=viewer)
    assert page.status_code == 403 and "Only admins" in page.text
