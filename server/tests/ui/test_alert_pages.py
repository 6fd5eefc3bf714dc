"""The alerts pages and their forms: the list, one alert, acknowledge / dismiss / reopen,
bisect, and an admin's webhook settings."""

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.reproduction_helpers import register_machine
from tests.ui.form_posts import post_form, rows, said
from tests.ui.test_pages import browser_login
from tests.watch_helpers import alerts_of, probe_values, upload_runs
from xaclab_server.models import ChangePoint, WatchSettings


def alerts_of_key(client: TestClient, alert_id: int) -> str:
    key: str = client.get(f"/api/v1/alerts/{alert_id}").json()["series"]["key"]
    return key


def _alert(client: TestClient, app: FastAPI) -> int:
    machine, agent = register_machine(client, "lab-page")
    upload_runs(client, machine, agent, probe_values(), app=app)
    (alert,) = alerts_of(client, machine)
    alert_id: int = alert["id"]
    return alert_id


def test_the_list_and_the_alert_say_what_changed_where_and_how_sure(
    client: TestClient, app: FastAPI
) -> None:
    alert_id = _alert(client, app)
    listing = client.get("/alerts")
    assert listing.status_code == 200
    assert f'data-alert-id="{alert_id}"' in listing.text
    assert "+15.0 %" in listing.text and "regression" in listing.text
    assert "compare the two runs" in listing.text and "/series/" in listing.text
    assert client.get("/alerts?direction=improvement").text.count("data-alert-id=") == 0
    assert client.get("/alerts?state=open").text.count("data-alert-id=") == 1
    page = client.get(f"/alerts/{alert_id}")
    assert page.status_code == 200
    assert "95 % bootstrap interval" in page.text and "p = " in page.text
    assert "nothing to bisect" in page.text  # both sides ran one revision
    assert client.get("/alerts/999999").status_code == 404
    history = client.get(listing_link := f"/series/{alerts_of_key(client, alert_id)}")
    assert history.status_code == 200 and 'data-testid="series-chart"' in history.text
    # One configuration only: no view against the runs' other configurations to draw.
    assert 'data-testid="series-view-help"' not in history.text
    assert client.get(f"/api/v1/series/{alerts_of_key(client, alert_id)}").json()["view"] is None
    assert f'href="/alerts/{alert_id}"' in history.text and "+15.0 %" in history.text
    assert history.text.count('<tr><td><a href="/runs/') == 24  # one row a run
    assert listing_link in listing.text
    assert client.get("/series/0123456789abcdef0123").status_code == 404


def test_an_operator_acknowledges_dismisses_and_reopens(client: TestClient, app: FastAPI) -> None:
    alert_id = _alert(client, app)
    csrf = browser_login(client, app)
    path = f"/alerts/{alert_id}/state"
    reply = post_form(client, path, csrf, action="dismiss", note="")
    assert reply.status_code == 422
    assert said(reply, "alert-error").startswith("Say why the change is expected")
    for action, state in (
        ("acknowledge", "acknowledged"),
        ("dismiss", "dismissed"),
        ("reopen", "open"),
    ):
        reply = post_form(client, path, csrf, action=action, note="the new group commit")
        assert reply.status_code == 303, reply.text
        assert rows(app, select(ChangePoint.state)) == [state]
    assert post_form(client, path, csrf, action="explode").status_code == 404


def test_a_viewer_reads_but_does_not_change_alerts(client: TestClient, app: FastAPI) -> None:
    alert_id = _alert(client, app)
    csrf = browser_login(client, app, role="viewer")
    page = client.get(f"/alerts/{alert_id}")
    assert page.status_code == 200 and '<form id="alert-state"' not in page.text
    reply = post_form(client, f"/alerts/{alert_id}/state", csrf, action="acknowledge")
    assert reply.status_code == 403
    assert rows(app, select(ChangePoint.state)) == ["open"]


def test_bisecting_one_revision_is_refused_on_the_page(client: TestClient, app: FastAPI) -> None:
    alert_id = _alert(client, app)
    csrf = browser_login(client, app)
    reply = post_form(client, f"/alerts/{alert_id}/bisect", csrf)
    assert reply.status_code == 422
    assert "no libxac git repository" in said(reply, "alert-error")  # checked first


def test_an_admin_sets_the_webhook_and_a_bad_url_is_refused(
    client: TestClient, app: FastAPI
) -> None:
    csrf = browser_login(client, app, role="admin")
    assert 'id="watch-settings"' in client.get("/alerts").text
    reply = post_form(
        client, "/alerts/settings", csrf, webhook_url="gopher://x", auto_bisect="true"
    )
    assert reply.status_code == 422 and "http:// or https://" in said(reply, "refused")
    assert rows(app, select(WatchSettings.webhook_url)) in ([], [None])
    good = "http://127.0.0.1:9/xaclab"
    reply = post_form(client, "/alerts/settings", csrf, webhook_url=good, auto_bisect="true")
    assert reply.status_code == 303
    assert rows(app, select(WatchSettings.webhook_url)) == [good]
    assert rows(app, select(WatchSettings.auto_bisect)) == [True]
    assert post_form(client, "/alerts/settings/test", csrf).status_code == 303
    assert "test" in client.get("/alerts").text


def test_only_admins_see_and_set_the_webhook(client: TestClient, app: FastAPI) -> None:
    csrf = browser_login(client, app)  # an operator
    assert 'id="watch-settings"' not in client.get("/alerts").text
    reply = post_form(client, "/alerts/settings", csrf, webhook_url="http://127.0.0.1:9/x")
    assert reply.status_code == 403
