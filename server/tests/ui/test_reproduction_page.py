"""The thesis-reproduction page (/reproduction), through TestClient on SQLite and PostgreSQL."""

import re

from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.conftest import make_settings
from tests.reproduction_helpers import register_machine, store_results, touch
from tests.ui.test_pages import browser_login
from xaclab_server.app import create_app


def row_html(page: str, table: str, column: str) -> str:
    section = page.split(f'id="table-{table}"', 1)[1].split("</section>", 1)[0]
    match = re.search(rf'<tr [^>]*data-column="{column}".*?</tr>', section, re.DOTALL)
    assert match, (table, column)
    return match.group(0)


def test_the_page_shows_lab_values_beside_the_thesis(client: TestClient) -> None:
    machine_id, agent = register_machine(client, "lab-page")
    other_id, _other = register_machine(client, "lab-other")
    run_id = store_results(
        client, machine_id, agent, "page-touch", [touch("write", True, [7.7, 7.9])]
    )
    page = client.get(f"/reproduction?machine_id={machine_id}")
    assert page.status_code == 200
    assert "default-src 'self'" in page.headers["content-security-policy"]
    text = page.text
    assert f'<option value="{machine_id}" selected>lab-page</option>' in text
    assert f'<option value="{other_id}" >lab-other</option>' in text
    assert f"/api/v1/machines/{machine_id}/reproduction?format=markdown" in text
    assert f"/api/v1/machines/{machine_id}/reproduction?format=html" in text

    measured = row_html(text, "4.2", "t_write_adv")
    assert 'data-status="measured"' in measured
    assert "<strong>7.8</strong>" in measured and f"run {run_id}, n = 2" in measured
    # Machine 1 printed 88.2 thousand cycles at 3.0 GHz: 29.4 us, beside the lab's 7.8 us.
    assert re.search(r'data-thesis-machine="1">29\.4\s', measured)
    assert "printed 88.2 kcycles" in measured and "lab/thesis 0.27" in measured

    missing = row_html(text, "4.2", "t_read_normal")
    assert 'data-status="missing"' in missing and "not measured yet" in missing
    assert re.search(r'data-thesis-machine="4">53\.67\s', missing)


def test_the_page_without_a_machine_offers_the_choice(client: TestClient) -> None:
    register_machine(client, "lab-choice")
    page = client.get("/reproduction")
    assert page.status_code == 200
    assert 'id="machine_id"' in page.text and "lab-choice" in page.text
    assert 'data-testid="reproduction"' not in page.text


def test_unknown_machines_are_404_pages(client: TestClient) -> None:
    for value in ("31337", "abc", "0", "99999999999999999999"):
        page = client.get(f"/reproduction?machine_id={value}")
        assert page.status_code == 404, value
        assert "does not exist" in page.text


def test_navigation_and_the_machines_page_link_to_it(client: TestClient) -> None:
    machine_id, _agent = register_machine(client, "lab-links")
    page = client.get("/machines").text
    assert '<a href="/reproduction">Thesis</a>' in page
    assert f'href="/reproduction?machine_id={machine_id}"' in page


def test_a_logged_in_viewer_reads_it_when_anonymous_reading_is_off(
    client: TestClient, app: FastAPI
) -> None:
    machine_id, _agent = register_machine(client, "lab-private")
    closed = create_app(make_settings(app.state.settings.database_url, anonymous_read=False))
    with TestClient(closed) as browser:
        reply = browser.get(f"/reproduction?machine_id={machine_id}", follow_redirects=False)
        assert reply.status_code == 303 and reply.headers["location"].startswith("/login")
        browser.headers["Authorization"] = "unused"  # browser_login drops it
        browser_login(browser, closed, role="viewer")
        page = browser.get(f"/reproduction?machine_id={machine_id}")
        assert page.status_code == 200 and "lab-private" in page.text
