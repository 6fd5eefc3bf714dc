"""The alerting webhook: refused URLs, delivery to a local receiver, retries, and an
unreachable receiver that never holds up an upload."""

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.conftest import add_user, free_port, make_settings
from tests.reproduction_helpers import register_machine
from tests.watch_helpers import Receiver, alerts_of, probe_values, upload_runs
from xaclab_server.services.watcher import Watcher

SETTINGS = "/api/v1/watch/settings"


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("ftp://example.org/hook", "must start with http:// or https://"),
        ("file:///etc/passwd", "must start with http:// or https://"),
        ("javascript:alert(1)", "must start with http:// or https://"),
        ("http://ann:secret@127.0.0.1:9/hook", "must not carry a user name or password"),
        ("http:///hook", "names no host"),
        ("http://127.0.0.1:99999/hook", "port is not a port"),
        # The test client reaches the server as http://testserver (port 80).
        ("http://testserver/hooks", "points at this xaclab server itself"),
        ("http://TestServer:80/x", "points at this xaclab server itself"),
        ("http://127.0.0.1:80/api/v1/runs", "points at this xaclab server itself"),
        ("http://[::1]:80/x", "points at this xaclab server itself"),
        ("http://0.0.0.0/x", "points at this xaclab server itself"),
        ("http://no-such-host.invalid/hook", "does not resolve"),
    ],
)
def test_bad_webhook_urls_are_refused_and_change_nothing(
    client: TestClient, url: str, words: str
) -> None:
    before = client.get(SETTINGS).json()
    reply = client.put(SETTINGS, json={"webhook_url": url, "auto_bisect": True})
    assert reply.status_code == 422, reply.text
    assert words in reply.json()["detail"]
    assert client.get(SETTINGS).json() == before == {"webhook_url": None, "auto_bisect": False}


def test_a_test_message_without_a_webhook_url_is_a_conflict_and_queues_nothing(
    client: TestClient,
) -> None:
    reply = client.post("/api/v1/watch/test")
    assert reply.status_code == 409, reply.text
    assert reply.json()["detail"] == "No webhook URL is set; set one first."
    assert client.get("/api/v1/watch/deliveries").json() == []
    documented = client.get("/openapi.json").json()["paths"]["/api/v1/watch/test"]["post"]
    assert "409" in documented["responses"]


def test_only_admins_set_or_read_the_webhook(client: TestClient, app: FastAPI) -> None:
    operator = {"Authorization": f"Bearer {add_user(app, 'opal', 'operator')}"}
    body = {"webhook_url": "http://127.0.0.1:9/x", "auto_bisect": False}
    assert client.put(SETTINGS, json=body, headers=operator).status_code == 403
    assert client.get(SETTINGS, headers=operator).status_code == 403
    assert client.put(SETTINGS, json=body).status_code == 200
    assert client.get(SETTINGS).json()["webhook_url"] == "http://127.0.0.1:9/x"
    assert client.put(SETTINGS, json={"webhook_url": "", "auto_bisect": False}).json() == {
        "webhook_url": None,
        "auto_bisect": False,
    }


def test_a_new_alert_is_posted_to_the_local_receiver(client: TestClient, app: FastAPI) -> None:
    with Receiver().running() as receiver:
        assert client.put(SETTINGS, json={"webhook_url": receiver.url}).status_code == 200
        machine, agent = register_machine(client, "lab-hook")
        upload_runs(client, machine, agent, probe_values(), app=app)
        with httpx.Client(trust_env=False) as http:
            delivered = app.state.watcher.deliver(http)
            assert app.state.watcher.deliver(http) == []  # each message goes once
        (alert,) = alerts_of(client, machine)
        assert len(delivered) == 1 and len(receiver.bodies) == 1
        body = receiver.bodies[0]
        assert body["event"] == "alert.new" and receiver.headers[0]["X-Xaclab-Event"] == "alert.new"
        assert body["alert"]["id"] == alert["id"]
        assert body["alert"]["change"]["percent"] == pytest.approx(15.0)
        assert body["alert"]["before"]["run_id"] == alert["before"]["run_id"]
        assert body["alert"]["links"]["history"] == f"/series/{alert['series']['key']}"
        (row,) = client.get("/api/v1/watch/deliveries").json()
        assert (row["status"], row["attempts"], row["last_error"]) == ("delivered", 1, "")

        test = client.post("/api/v1/watch/test")
        assert test.status_code == 202
        with httpx.Client(trust_env=False) as http:
            app.state.watcher.deliver(http)
        assert receiver.bodies[-1]["event"] == "test"


def test_an_unreachable_webhook_never_holds_up_an_upload_and_is_retried(
    client: TestClient, app: FastAPI
) -> None:
    closed = f"http://127.0.0.1:{free_port()}/hook"  # nothing listens there
    assert client.put(SETTINGS, json={"webhook_url": closed}).status_code == 200
    machine, agent = register_machine(client, "lab-unreachable")
    upload_runs(client, machine, agent, probe_values(), app=app)
    # Detection wrote the message; nothing tried to send it: uploads never do.
    (row,) = client.get("/api/v1/watch/deliveries").json()
    assert (row["status"], row["attempts"]) == ("pending", 0)
    settings = make_settings(
        app.state.settings.database_url,
        webhook_retry_seconds=0.001,
        webhook_attempts=3,
        webhook_timeout_seconds=2,
    )
    watcher = Watcher(
        factory=app.state.sessionmaker, settings=settings, notifier=app.state.notifier, git=None
    )
    attempts = []
    with httpx.Client(trust_env=False) as http:
        for _ in range(200):
            watcher.deliver(http)
            (row,) = client.get("/api/v1/watch/deliveries").json()
            attempts.append(row["attempts"])
            if row["status"] != "pending":
                break
    assert row["status"] == "failed" and row["attempts"] == 3
    assert sorted(set(attempts)) == [1, 2, 3]
    assert "Connect" in row["last_error"]
    # Uploads still go in, and are detected, while the receiver is down.
    upload_runs(client, machine, agent, [11.5] * 3, app=app)
    assert len(alerts_of(client, machine)) == 1


def test_a_receiver_that_answers_an_error_is_tried_again(client: TestClient, app: FastAPI) -> None:
    with Receiver(status=503).running() as receiver:
        assert client.put(SETTINGS, json={"webhook_url": receiver.url}).status_code == 200
        machine, agent = register_machine(client, "lab-503")
        upload_runs(client, machine, agent, probe_values(), app=app)
        with httpx.Client(trust_env=False) as http:
            app.state.watcher.deliver(http)
        (row,) = client.get("/api/v1/watch/deliveries").json()
        assert (row["status"], row["attempts"]) == ("pending", 1)
        assert row["last_error"] == "HTTP 503 from the receiver"
        assert len(receiver.bodies) == 1
