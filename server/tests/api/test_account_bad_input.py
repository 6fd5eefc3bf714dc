"""Bad input to logins, tokens and registrations: a 4xx with a sentence, nothing counted,
nothing stored, and nothing that tells whether an account exists."""

import re

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.conftest import TEST_PASSWORD, add_user, row_counts
from tests.helpers import AGENT
from tests.ui.form_posts import said


@pytest.mark.parametrize(
    ("username", "password", "sentence"),
    [
        ("u" * 65, TEST_PASSWORD, "username: String should have at most 64 characters"),
        ("amy", "p" * 1025, "password: String should have at most 1024 characters"),
    ],
)
def test_over_long_logins_are_refused_before_anything_is_counted(
    anonymous: TestClient, app: FastAPI, username: str, password: str, sentence: str
) -> None:
    add_user(app, "amy", "viewer")
    reply = anonymous.post("/api/v1/login", json={"username": username, "password": password})
    assert reply.status_code == 422 and sentence in reply.json()["detail"]
    counts = row_counts(app)
    assert counts["auth_throttles"] == 0 and counts["audit_events"] == 1  # amy's test token


def test_the_login_form_refuses_over_long_fields_with_a_sentence(
    anonymous: TestClient, app: FastAPI
) -> None:
    for username, password, sentence in (
        ("u" * 65, "x", "A username has at most 64 characters."),
        ("amy", "p" * 1025, "A password has at most 1024 characters."),
    ):
        form = anonymous.get("/login").text
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', form)
        assert csrf
        reply = anonymous.post(
            "/login",
            data={"csrf_token": csrf.group(1), "username": username, "password": password},
            follow_redirects=False,
        )
        assert reply.status_code == 422
        assert said(reply, "login-error") == sentence
    assert row_counts(app)["auth_throttles"] == 0


@pytest.mark.parametrize(
    "credentials",
    [
        b"Bearer short",
        b"Bearer xu_" + b"a" * 500,
        b"Bearer xu_\xe9\xe9\xe9",
        b"Bearer xa_" + b"a" * 43,
    ],
)
def test_malformed_api_tokens_are_refused_with_a_sentence(
    anonymous: TestClient, credentials: bytes
) -> None:
    reply = anonymous.get("/api/v1/me", headers={"Authorization": credentials})
    assert reply.status_code == 401
    assert reply.json()["detail"].startswith("The API token is malformed")


def test_malformed_agent_tokens_are_refused_with_a_sentence(anonymous: TestClient) -> None:
    for credentials in (b"Bearer nope", b"Bearer xa_" + b"\xff" * 43, b"Bearer " + b"x" * 5000):
        reply = anonymous.post(
            f"{AGENT}/jobs/claim",
            params={"wait": 0},
            headers={"Authorization": credentials},
        )
        assert reply.status_code == 401
        assert reply.json()["detail"].startswith("The agent token is malformed")


def test_a_malformed_session_cookie_is_nobody(anonymous: TestClient) -> None:
    anonymous.cookies.set("xaclab_session", "not a session token at all")
    assert anonymous.get("/api/v1/me").json()["username"] is None


@pytest.mark.parametrize(
    ("path", "body", "content_type"),
    [
        ("/api/v1/login", b'{"username": "amy\xff", "password": "x"}', "application/json"),
        (f"{AGENT}/register", b'{"name": "x", "fingerprint": {"c": "\xfe"}}', "application/json"),
        (
            "/login",
            b"csrf_token=x&username=amy\xff&password=y",
            "application/x-www-form-urlencoded",
        ),
    ],
)
def test_bodies_that_are_not_utf8_are_refused_with_a_sentence(
    anonymous: TestClient, app: FastAPI, path: str, body: bytes, content_type: str
) -> None:
    reply = anonymous.post(path, content=body, headers={"Content-Type": content_type})
    assert reply.status_code == 400
    assert reply.json()["detail"].startswith("The request body is not UTF-8 (byte ")
    counts = row_counts(app)
    assert counts["machines"] == counts["login_sessions"] == counts["auth_throttles"] == 0


def test_an_over_long_registration_token_is_refused(anonymous: TestClient, app: FastAPI) -> None:
    reply = anonymous.post(
        f"{AGENT}/register",
        json={"registration_token": "t" * 1025, "name": "lab-x", "fingerprint": {}},
    )
    assert reply.status_code == 422 and "registration_token" in reply.json()["detail"]
    assert row_counts(app)["machines"] == 0
