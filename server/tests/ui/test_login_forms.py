"""The login form (guarded by a double-submit cookie) and the logout form."""

import re

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.conftest import TEST_PASSWORD, add_user, row_counts
from tests.ui.form_posts import post_form, rows, said
from tests.ui.test_pages import browser_login
from xaclab_server.models import LoginSession, User


def login_csrf(client: TestClient, path: str = "/login") -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', client.get(path).text)
    assert match
    return match.group(1)


def test_logging_in_starts_a_session_and_goes_back(anonymous: TestClient, app: FastAPI) -> None:
    add_user(app, "lena", "viewer")
    csrf = login_csrf(anonymous, "/login?next=/queue")
    reply = post_form(
        anonymous, "/login", csrf, username="lena", password=TEST_PASSWORD, next="/queue"
    )
    assert reply.status_code == 303 and reply.headers["location"] == "/queue"
    assert "xaclab_session=" in reply.headers["set-cookie"]
    assert len(rows(app, select(LoginSession))) == 1
    assert rows(app, select(User.last_login_at).where(User.username == "lena"))[0] is not None
    assert 'data-testid="whoami">lena (viewer)' in anonymous.get("/queue").text


def test_a_wrong_password_is_refused_on_the_form(anonymous: TestClient, app: FastAPI) -> None:
    add_user(app, "lena", "viewer")
    reply = post_form(anonymous, "/login", login_csrf(anonymous), username="lena", password="nope")
    assert reply.status_code == 401
    assert "The username or password is wrong." in reply.text
    assert re.search(r'name="csrf_token" value="[^"]+"', reply.text)  # a fresh form to retry
    assert row_counts(app)["login_sessions"] == 0


def test_the_login_never_sends_the_browser_off_the_server(
    anonymous: TestClient, app: FastAPI
) -> None:
    add_user(app, "lena", "viewer")
    for target in ("//evil.example/", "https://evil.example/", "/\\evil.example"):
        reply = post_form(
            anonymous,
            "/login",
            login_csrf(anonymous),
            username="lena",
            password=TEST_PASSWORD,
            next=target,
        )
        assert reply.status_code == 303 and reply.headers["location"] == "/", target


def test_logging_out_ends_the_session(client: TestClient, app: FastAPI) -> None:
    csrf = browser_login(client, app, role="viewer")
    assert row_counts(app)["login_sessions"] == 1
    reply = post_form(client, "/logout", csrf)
    assert reply.status_code == 303 and reply.headers["location"] == "/"
    assert row_counts(app)["login_sessions"] == 0
    assert client.get("/api/v1/me").json()["username"] is None


def test_a_forged_logout_ends_nothing(client: TestClient, app: FastAPI) -> None:
    browser_login(client, app, role="viewer")
    session_cookie = client.cookies["xaclab_session"]
    reply = post_form(client, "/logout", "forged")
    assert reply.status_code == 303
    assert row_counts(app)["login_sessions"] == 1
    client.cookies.set("xaclab_session", session_cookie)
    page = client.get("/machines")
    assert said(page, "whoami") == "web-viewer (viewer)"
