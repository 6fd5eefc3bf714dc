"""The web UI in headless Chromium against the real server (uvicorn, SQLite).

The test plays the user in the browser and the agent over HTTP: it fills in
the run form, then claims the job, uploads generated results, finishes it,
and expects the run page to show the outcome and draw the chart by itself.
"""

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import ConsoleMessage, Error, Page, Request, expect, sync_playwright
from xaclab_testsupport import ServerProcess

from tests.conftest import REGISTRATION_TOKEN
from tests.helpers import AGENT, claim, page_touch_results, register, upload

CHROMIUM = "/usr/bin/chromium"
ADMIN_PASSWORD = "browser-password-0123"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    running = ServerProcess(
        tmp_path, registration_token=REGISTRATION_TOKEN, env={"XACLAB_ENV": "test"}
    )
    running.create_admin("browser", password=ADMIN_PASSWORD, api_token=None)
    with running:
        yield running.base_url


def test_run_form_to_chart(server: str) -> None:
    assert Path(CHROMIUM).exists(), "Debian's chromium is needed: apt-get install chromium"
    agent = httpx.Client(base_url=server, timeout=30)
    machine_id, headers = register(agent, "lab-browser")
    problems: list[str] = []

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("pageerror", lambda error: problems.append(f"page error: {error}"))

            def on_console(message: ConsoleMessage) -> None:
                if message.type == "error":
                    problems.append(f"console error: {message.text}")

            page.on("console", on_console)

            def on_failed(request: Request) -> None:
                # The page closes its event stream on "end"; when that beats the last
                # bytes of the response, Chromium reports the request as aborted.
                if not (request.url.endswith("/events") and request.failure == "net::ERR_ABORTED"):
                    problems.append(f"failed: {request.url} {request.failure}")

            page.on("requestfailed", on_failed)
            drive(page, server, agent, machine_id, headers)
        except Error:
            raise
        finally:
            browser.close()
    agent.close()
    assert problems == []


def drive(
    page: Page, server: str, agent: httpx.Client, machine_id: int, headers: dict[str, str]
) -> None:
    page.goto(f"{server}/")
    expect(page.locator("#machines")).to_contain_text("lab-browser")
    page.get_by_test_id("login-link").click()
    page.fill("#username", "browser")
    page.fill("#password", ADMIN_PASSWORD)
    page.click("#login-submit")
    expect(page.get_by_test_id("whoami")).to_contain_text("browser (admin)")
    page.get_by_role("link", name="New run").click()

    page.select_option("#machine_id", str(machine_id))
    page.select_option("#suite", "page-touch")
    page.select_option("[name='page-touch.profile']", "quick")
    page.fill("[name='page-touch.param.repetitions']", "3")
    page.fill("[name='page-touch.param.max_pages']", "16")
    page.click("#run-submit")
    page.wait_for_url(re.compile(r".*/runs/\d+$"))
    run_id = int(page.url.rsplit("/", 1)[1])

    status = page.locator("#run-status")
    expect(status).to_have_attribute("data-status", "queued")

    job: dict[str, Any] = claim(agent, headers).json()
    assert job["run_id"] == run_id
    assert job["params"] == {"repetitions": 3, "max_pages": 16}
    reply = agent.post(
        f"{AGENT}/jobs/{job['job_id']}/progress",
        json={"fraction": 0.5, "message": "n=4 write"},
        headers=headers,
    )
    assert reply.status_code == 200
    expect(status).to_have_attribute("data-status", "running", timeout=10_000)
    expect(page.locator("#run-message")).to_have_text("n=4 write", timeout=10_000)

    results = page_touch_results(max_pages=16, repetitions=3)
    assert upload(agent, headers, job["job_id"], results).status_code == 201
    reply = agent.post(
        f"{AGENT}/jobs/{job['job_id']}/finish",
        json={"status": "succeeded", "message": f"{len(results)} results"},
        headers=headers,
    )
    assert reply.status_code == 200

    # The page reloads when the run ends and shows the figures the server drew.
    expect(status).to_have_attribute("data-status", "succeeded", timeout=10_000)
    expect(status).to_have_text("succeeded")
    chart = page.locator("[data-testid='figure'][data-kind='lines']")
    expect(chart).to_be_visible(timeout=10_000)
    expect(chart.locator("svg.figure-svg .series")).to_have_count(4)
    expect(chart.locator(".x-title")).to_have_text("n: pages each transaction touches")
    expect(chart.locator(".y-title")).to_have_text("time per page (µs; lower is better)")
    for variant in ("read · advisory no", "read · advisory yes", "write · advisory no"):
        expect(chart.get_by_test_id("legend")).to_contain_text(f"LIBXAC · access {variant}")
    singles = page.get_by_test_id("single-values")
    expect(singles.locator("tbody tr")).to_have_count(2)
    expect(singles).to_contain_text("sigsegv_roundtrip")
    expect(singles).to_contain_text("operating system")
