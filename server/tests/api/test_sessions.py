"""Login sessions end when idle or old; a new password or role, or disabling, ends them all.

Time comes from a :class:`ManualClock`, moved by hand.
"""

from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.conftest import TEST_PASSWORD, add_user, clear_tables, make_settings, row_counts
from tests.manual_clock import ManualClock
from tests.ui.form_posts import rows
from xaclab_server.app import create_app
from xaclab_server.models import AuditEvent, User


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def timed_app(db_url: str, clock: ManualClock) -> Iterator[FastAPI]:
    """Sessions of at most 12 hours, ended after 120 idle minutes (the defaults)."""
    app = create_app(make_settings(db_url), clock=clock)
    yield app
    clear_tables(app)


def logged_in(app: FastAPI, username: str) -> TestClient:
    client = TestClient(app)
    reply = client.post("/api/v1/login", json={"username": username, "password": TEST_PASSWORD})
    assert reply.status_code == 200, reply.text
    return client


def me(client: TestClient) -> str | None:
    name: str | None = client.get("/api/v1/me").json()["username"]
    return name


def test_a_session_ends_after_its_idle_limit(timed_app: FastAPI, clock: ManualClock) -> None:
    add_user(timed_app, "ida", "viewer")
    with logged_in(timed_app, "ida") as client:
        for _ in range(3):
            clock.advance(119 * 60)
            assert me(client) == "ida"  # each request restarts the idle time
        clock.advance(120 * 60)
        assert me(client) is None
        assert row_counts(timed_app)["login_sessions"] == 0


def test_a_session_ends_after_its_absolute_lifetime_even_when_busy(
    timed_app: FastAPI, clock: ManualClock
) -> None:
    add_user(timed_app, "ida", "viewer")
    with logged_in(timed_app, "ida") as client:
        for _ in range(11):
            clock.advance(3600)
            assert me(client) == "ida"
        clock.advance(3600)
        assert me(client) is None


@pytest.mark.parametrize(
    ("change", "audited"),
    [
        ({"password": "a-new-password-0123"}, {"password": "changed"}),
        ({"role": "operator"}, {"role": "operator"}),
        ({"disabled": True}, {"disabled": True}),
    ],
)
def test_a_new_password_or_role_or_disabling_ends_every_login(
    timed_app: FastAPI, change: dict[str, object], audited: dict[str, object]
) -> None:
    token = add_user(timed_app, "ida", "viewer")
    admin = add_user(timed_app, "root", "admin")
    with logged_in(timed_app, "ida") as browser, TestClient(timed_app) as script:
        script.headers["Authorization"] = f"Bearer {token}"
        assert script.get("/api/v1/me").json()["username"] == "ida"
        (ida,) = rows(timed_app, select(User.id).where(User.username == "ida"))
        reply = browser.patch(
            f"/api/v1/users/{ida}", json=change, headers={"Authorization": f"Bearer {admin}"}
        )
        assert reply.status_code == 200, reply.text
        assert me(browser) is None
        refused = script.get("/api/v1/me")
        assert refused.status_code == 401 and "revoked" in refused.json()["detail"]
    (detail,) = rows(timed_app, select(AuditEvent.detail).where(AuditEvent.action == "user.update"))
    assert detail == {**audited, "sessions_ended": 1, "tokens_revoked": 1}


def test_saving_a_user_unchanged_ends_nothing(timed_app: FastAPI) -> None:
    token = add_user(timed_app, "ida", "viewer")
    admin = add_user(timed_app, "root", "admin")
    with logged_in(timed_app, "ida") as browser:
        (ida,) = rows(timed_app, select(User.id).where(User.username == "ida"))
        reply = browser.patch(
            f"/api/v1/users/{ida}",
            json={"role": "viewer", "disabled": False},
            headers={"Authorization": f"Bearer {admin}"},
        )
        assert reply.status_code == 200
        assert me(browser) == "ida"
        assert (
            browser.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"}).status_code
            == 200
        )
    assert rows(timed_app, select(AuditEvent).where(AuditEvent.action == "user.update")) == []


def test_under_tls_the_session_cookie_is_secure(db_url: str) -> None:
    app = create_app(make_settings(db_url, tls_cert_file="/x/cert.pem", tls_key_file="/x/key.pem"))
    add_user(app, "ida", "viewer")
    try:
        with TestClient(app) as client:
            reply = client.post(
                "/api/v1/login", json={"username": "ida", "password": TEST_PASSWORD}
            )
            cookie = reply.headers["set-cookie"]
            assert cookie.startswith("xaclab_session=") and "Secure" in cookie
            assert "Max-Age=43200" in cookie  # the absolute lifetime, 12 hours
    finally:
        clear_tables(app)
