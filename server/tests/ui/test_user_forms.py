"""The users page's forms (admins only): make a user, change a role, disable a user."""

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.conftest import add_user
from tests.ui.form_posts import heading, post_form, rows, said
from tests.ui.test_pages import browser_login
from xaclab_server.models import User

PASSWORD = "nina-password-0123"


def user_named(app: FastAPI, username: str) -> User | None:
    found = rows(app, select(User).where(User.username == username))
    return found[0] if found else None


def test_an_admin_makes_a_user_who_can_log_in(client: TestClient, app: FastAPI) -> None:
    csrf = browser_login(client, app, role="admin")
    reply = post_form(
        client, "/users/create", csrf, username="nina", password=PASSWORD, role="operator"
    )
    assert reply.status_code == 303 and reply.headers["location"] == "/users"
    nina = user_named(app, "nina")
    assert nina is not None and (nina.role, nina.disabled) == ("operator", False)
    assert "nina" in client.get("/users").text


def test_an_admin_changes_a_role_and_disables_a_user(client: TestClient, app: FastAPI) -> None:
    add_user(app, "otto", "operator")
    otto = user_named(app, "otto")
    assert otto is not None
    csrf = browser_login(client, app, role="admin")
    reply = post_form(
        client, "/users/update", csrf, user_id=str(otto.id), role="viewer", disabled="true"
    )
    assert reply.status_code == 303
    otto = user_named(app, "otto")
    assert otto is not None and (otto.role, otto.disabled) == ("viewer", True)


def test_a_weak_password_is_refused(client: TestClient, app: FastAPI) -> None:
    csrf = browser_login(client, app, role="admin")
    reply = post_form(client, "/users/create", csrf, username="nina", password="short")
    assert reply.status_code == 422
    assert said(reply, "refused") == "A password has at least 10 characters."
    assert heading(reply) == "Not accepted"
    assert user_named(app, "nina") is None
    reply = post_form(client, "/users/update", csrf, user_id="31337", role="viewer")
    assert reply.status_code == 422 and said(reply, "refused") == "That user does not exist."


def test_an_operator_may_not_make_users(client: TestClient, app: FastAPI) -> None:
    csrf = browser_login(client, app, role="operator")
    reply = post_form(client, "/users/create", csrf, username="nina", password=PASSWORD)
    assert reply.status_code == 403
    assert said(reply, "refused") == "This needs the admin role; yours is operator."
    assert heading(reply) == "Not allowed"
    assert user_named(app, "nina") is None
    page = client.get("/users")
    assert page.status_code == 403 and said(page, "refused") == "Only admins manage users."


def test_an_admin_sets_a_new_password_which_ends_the_users_logins(
    client: TestClient, app: FastAPI
) -> None:
    token = add_user(app, "otto", "operator")
    otto = user_named(app, "otto")
    assert otto is not None
    csrf = browser_login(client, app, role="admin")
    weak = post_form(client, "/users/update", csrf, user_id=str(otto.id), password="short")
    assert weak.status_code == 422
    assert said(weak, "refused") == "A password has at least 10 characters."
    assert client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    reply = post_form(
        client,
        "/users/update",
        csrf,
        user_id=str(otto.id),
        role="operator",
        password="a-new-password-0123",
    )
    assert reply.status_code == 303
    refused = client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert refused.status_code == 401
    with TestClient(app) as otto_client:
        logged = otto_client.post(
            "/api/v1/login", json={"username": "otto", "password": "a-new-password-0123"}
        )
        assert logged.status_code == 200
