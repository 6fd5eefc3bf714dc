"""Every HTML page in headless Chromium, logged in as an admin, with seeded data:
no console error, no page error, no failed request; and text that users and
agents can store (token and schedule names, job messages, log lines, library
versions, fingerprints) is shown as text, never run as markup."""

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest
from fastapi.routing import APIRoute
from playwright.sync_api import ConsoleMessage, Dialog, Request, sync_playwright

from tests.helpers import AGENT, claim, page_touch_results, result_record
from tests.live import REGISTRATION_TOKEN, ServerProcess, admin_token, browser_log_in
from tests.ui.test_browser import CHROMIUM, CHROMIUM_ARGS
from tests.watch_helpers import seed_alert
from xaclab_server.core.migrations import upgrade_head
from xaclab_server.ui import pages
from xaclab_server.ui import reproduction as reproduction_page

# Closes an attribute, then a tag that would show itself and run script.
XSS = "\"'><img src=x data-xss onerror=alert(1)>"


@pytest.fixture
def seeded(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """A server on SQLite with two finished runs full of XSS strings; yields the URL, path ids."""
    url = f"sqlite:///{tmp_path / 'xaclab.sqlite3'}"
    upgrade_head(url)
    token = admin_token(url)
    with ServerProcess(url, tmp_path / "server.log") as server:
        client = httpx.Client(
            base_url=server.base_url, timeout=30, headers={"Authorization": f"Bearer {token}"}
        )
        reply = client.post(
            f"{AGENT}/register",
            json={
                "registration_token": REGISTRATION_TOKEN,
                "name": "lab-xss",
                "fingerprint": {"cpu": {"model": XSS}, "note": XSS},
            },
        )
        assert reply.status_code == 201, reply.text
        machine_id = reply.json()["machine_id"]
        agent = {"Authorization": f"Bearer {reply.json()['agent_token']}"}
        run_ids = []
        for _ in range(2):
            made = client.post(
                "/api/v1/runs",
                json={"machine_id": machine_id, "suite": "page-touch", "profile": "quick"},
            )
            assert made.status_code == 201, made.text
            run_ids.append(made.json()["run_id"])
            job_id = claim(client, agent).json()["job_id"]
            for path, body in (
                ("progress", {"fraction": 0.5, "message": XSS}),
                ("logs", {"seq": 1, "stream": "stdout", "text": XSS + "\n"}),
            ):
                assert client.post(
                    f"{AGENT}/jobs/{job_id}/{path}", json=body, headers=agent
                ).is_success
            results = page_touch_results(max_pages=4, repetitions=3)
            for record in results:
                record["library"] = {"name": "libxac", "version": XSS, "git_revision": XSS}
            results.append(result_record(params={"n": 1, "access": "read", "note": XSS}))
            # A row of the thesis-reproduction report (table 4.2) with a lab value.
            results.append(
                result_record(
                    params={
                        "n": 1024,
                        "access": "read",
                        "advisory": False,
                        "durability": "nondurable",
                    }
                )
            )
            sent = client.post(
                f"{AGENT}/jobs/{job_id}/results",
                json={"upload_id": str(uuid.uuid4()), "results": results},
                headers=agent,
            )
            assert sent.status_code == 201, sent.text
            done = client.post(
                f"{AGENT}/jobs/{job_id}/finish",
                json={"status": "succeeded", "message": XSS},
                headers=agent,
            )
            assert done.status_code == 200, done.text
        alert_id = seed_alert(client, machine_id, agent, text=XSS, revision=XSS)
        series_key = client.get(f"/api/v1/alerts/{alert_id}").json()["series"]["key"]
        queued = client.post(  # stays queued: the queue page lists it
            "/api/v1/runs",
            json={"machine_id": machine_id, "suite": "page-touch", "profile": "quick"},
        )
        assert queued.status_code == 201, queued.text
        assert client.post("/api/v1/tokens", json={"name": XSS}).status_code == 201
        schedule = client.post(
            "/api/v1/schedules",
            json={
                "name": XSS,
                "cron": "0 3 * * *",
                "matrix": {"machine_ids": [machine_id], "suites": ["page-touch"]},
            },
        )
        assert schedule.status_code == 201, schedule.text
        client.close()
        yield (
            server.base_url,
            {
                "run_id": str(run_ids[0]),
                "a": str(run_ids[0]),
                "b": str(run_ids[1]),
                "machine_id": str(machine_id),
                "alert_id": str(alert_id),
                "key": series_key,
            },
        )


def html_pages(ids: dict[str, str]) -> list[str]:
    """Every GET route of the pages, path ids filled in, plus a filled-in comparison and the
    thesis-reproduction report of the seeded machine."""
    paths = []
    for route in (*pages.router.routes, *reproduction_page.router.routes):
        if isinstance(route, APIRoute) and "GET" in (route.methods or ()):
            names = re.findall(r"{(\w+)}", route.path)
            assert set(names) <= set(ids), f"no seeded id for {route.path}"
            paths.append(re.sub(r"{(\w+)}", lambda m: ids[m.group(1)], route.path))
    # A history names its series: the one whose params hold the XSS string.
    series = {"n": 1, "access": "read", "note": XSS}
    query = urlencode(
        {
            "machine_id": ids["machine_id"],
            "suite": "page-touch",
            "benchmark": "page_touch",
            "sut": "libxac",
            "metric": "time_per_page",
            "unit": "us",
            "params": json.dumps(series),
        }
    )
    paths = [f"/history?{query}" if p == "/history" else p for p in paths]
    paths.append(f"/compare?kind=runs&a={ids['a']}&b={ids['b']}")
    paths.append(f"/reproduction?machine_id={ids['machine_id']}")
    return paths


def test_every_page_renders_cleanly_and_escapes_stored_text(
    seeded: tuple[str, dict[str, str]],
) -> None:
    base, ids = seeded
    paths = html_pages(ids)
    assert len(paths) >= 10
    problems: list[str] = []
    dialogs: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            current = {"path": "/login"}  # the page being visited, for the messages

            def on_console(message: ConsoleMessage) -> None:
                if message.type == "error":
                    problems.append(f"{current['path']}: console error: {message.text}")

            def on_dialog(dialog: Dialog) -> None:
                dialogs.append(f"{current['path']}: {dialog.message}")
                dialog.dismiss()

            page.on("console", on_console)
            page.on("pageerror", lambda e: problems.append(f"{current['path']}: page error: {e}"))

            def on_failed(request: Request) -> None:
                # Leaving the run page cuts its event stream: that is no failure.
                if not (request.url.endswith("/events") and request.failure == "net::ERR_ABORTED"):
                    problems.append(f"{current['path']}: failed {request.url} {request.failure}")

            page.on("requestfailed", on_failed)
            page.on("dialog", on_dialog)

            browser_log_in(page, base)
            for path in paths:
                current["path"] = path
                reply = page.goto(f"{base}{path}", wait_until="load")
                assert reply is not None and reply.status == 200, (
                    f"{path}: {reply and reply.status}"
                )
                page.wait_for_timeout(300)  # scripts that fetch and draw after load
                assert page.locator("[data-xss]").count() == 0, f"{path} made markup of text"
            current["path"] = f"/runs/{ids['run_id']}"
            page.goto(f"{base}/runs/{ids['run_id']}")
            page.wait_for_selector("[data-testid='figure'][data-kind='lines']", timeout=10_000)
            assert XSS in page.inner_text("body"), "the job message is not shown as text"
            assert page.locator("[data-xss]").count() == 0
            current["path"] = "/history"
            page.goto(f"{base}{next(p for p in paths if p.startswith('/history'))}")
            page.wait_for_selector("[data-testid='history-chart'][data-ready='true']")
            assert XSS in page.inner_text("[data-testid='series-params']")
            assert page.locator("[data-xss]").count() == 0
            # The alert's series: constant on either side of its step, so no noise between
            # the change points, and the minimum change (3 %) is the smallest step it shows.
            page.goto(f"{base}/series/{ids['key']}")
            sensitivity = page.inner_text("[data-testid='series-sensitivity']")
            assert "Run-to-run noise 0.0 %" in sensitivity and "20 points" in sensitivity
            assert page.inner_text("[data-testid='series-smallest']") == "3.0 %"
            page.goto(f"{base}/tokens")
            assert XSS in page.inner_text("body")
            page.goto(f"{base}/schedules")
            assert XSS in page.inner_text("body")
            page.goto(f"{base}/reproduction?machine_id={ids['machine_id']}")
            assert XSS in page.inner_text("[data-testid='lab-machine']")
            lab = page.locator(
                "#table-4\\.2 tr[data-column='t_read_normal'] [data-testid='lab-value']"
            )
            assert lab.locator("strong").inner_text() == "4.1"  # mean of result_record's samples
            page.select_option("#machine_id", ids["machine_id"])
            page.click("#reproduction-submit")
            page.wait_for_selector("[data-testid='reproduction']")
            assert page.locator("[data-table]").count() == 15
        finally:
            browser.close()
    assert dialogs == []
    assert problems == []
