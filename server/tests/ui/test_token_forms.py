"""The tokens page's forms: any logged-in user makes and revokes their own API tokens."""

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.conftest import add_user
from tests.ui.form_posts import post_form, rows, said
from tests.ui.test_pages import browser_login
from xaclab_server.models import ApiToken, User


def tokens_named(app: FastAPI, name: str) -> list[ApiToken]:
    return rows(app, select(ApiToken).where(ApiToken.name == name))


def test_a_viewer_makes_a_token_and_revokes_it(client: TestClient, app: FastAPI) -> None:
    csrf = browser_login(client, app, role="viewer")
    reply = post_form(client, "/tokens/create", csrf, name="ci")
    assert reply.status_code == 200 and "New API token" in reply.text
    token = said(reply, "secret")
    assert token.startswith("xu_")
    me = client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"}).json()
    assert me["username"] == "web-viewer"
    (row,) = tokens_named(app, "ci")
    assert row.revoked_at is None
    reply = post_form(client, "/tokens/revoke", csrf, token_id=str(row.id))
    assert reply.status_code == 303 and reply.headers["location"] == "/tokens"
    assert tokens_named(app, "ci")[0].revoked_at is not None


def test_a_nameless_token_is_refused(client: TestClient, app: FastAPI) -> None:
    csrf = browser_login(client, app, role="viewer")
    reply = post_form(client, "/tokens/create", csrf, name="")
    assert reply.status_code == 422
    assert said(reply, "refused") == "A token's name is 1 to 100 characters."
    assert tokens_named(app, "") == []


def test_a_viewer_cannot_revoke_another_users_token(client: TestClient, app: FastAPI) -> None:
    add_user(app, "other", "viewer")
    (theirs,) = rows(
        app,
        select(ApiToken).join(User, User.id == ApiToken.user_id).where(User.username == "other"),
    )
    csrf = browser_login(client, app, role="viewer")  # admins may revoke anybody's
    reply = post_form(client, "/tokens/revoke", csrf, token_id=str(theirs.id))
    assert reply.status_code == 422
    assert said(reply, "refused") == f"Token {theirs.id} does not exist."
    assert rows(app, select(ApiToken.revoked_at).where(ApiToken.id == theirs.id)) == [None]


def test_making_a_token_needs_a_login(anonymous: TestClient, app: FastAPI) -> None:
    reply = post_form(anonymous, "/tokens/create", "", name="ci")
    assert reply.status_code == 303
    assert reply.headers["location"] == "/login?next=%2Ftokens%2Fcreate"
    assert tokens_named(app, "ci") == []
