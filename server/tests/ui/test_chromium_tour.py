"""Every page and form in headless Chromium, as a user of the lab goes through them.

A real server (uvicorn, SQLite) with a machine whose agent (played over HTTP)
uploaded search-tree, page-touch and storage runs shaped like the real
programs' results.  Logged in as an admin, the test opens the overview, the
run pages, the comparison page (its pickers and one-click links), a history,
the thesis page (queueing the reproduction), and drives every form: the
matrix (now and on a schedule), cancel, re-run, baseline, schedules, tokens,
users.  On every page it checks that the charts name their axes, units and
systems in the DOM and that nothing on the page fails; it saves a screenshot
of each page under ``.test/screenshots`` (make test keeps them there).
"""

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import ConsoleMessage, Page, Request, expect, sync_playwright

from tests.helpers import AGENT, claim, upload
from tests.lab_data import page_touch_records, search_tree_records, storage_records
from tests.live import ADMIN_PASSWORD, REPO, ServerProcess, admin_token
from tests.reproduction_helpers import register_machine, store_results
from tests.ui.test_browser import CHROMIUM, CHROMIUM_ARGS
from tests.validity_helpers import FINGERPRINT, env, write_cache
from xaclab_server.core.migrations import upgrade_head

SHOTS = REPO / ".test" / "screenshots"
SYSTEMS = ("LIBXAC", "Berkeley DB", "LMDB")


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A server with one machine and its runs; yields the URL and the ids the tour needs."""
    url = f"sqlite:///{tmp_path / 'xaclab.sqlite3'}"
    upgrade_head(url)
    token = admin_token(url)
    with ServerProcess(url, tmp_path / "server.log") as server:
        client = httpx.Client(
            base_url=server.base_url, timeout=30, headers={"Authorization": f"Bearer {token}"}
        )
        machine_id, agent = register_machine(client, "lab-tour", FINGERPRINT)
        trees = [
            store_results(client, machine_id, agent, "search-tree", search_tree_records(seed=s))
            for s in (1, 2)
        ]
        touch = store_results(client, machine_id, agent, "page-touch", page_touch_records())
        store_results(client, machine_id, agent, "storage", storage_records())
        yield {
            "base": server.base_url,
            "client": client,
            "agent": agent,
            "machine_id": machine_id,
            "trees": trees,
            "touch": touch,
        }
        client.close()


def shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def check_charts(page: Page) -> None:
    """Every chart on the page names both axes and has a legend and a table of its numbers."""
    for figure in page.locator("[data-testid='figure']").all():
        kind = figure.get_attribute("data-kind")
        assert (figure.locator(".x-title").text_content() or "").strip(), kind
        if kind != "dots":
            assert (figure.locator(".y-title").text_content() or "").strip(), kind
        assert figure.get_by_test_id("legend").locator("li").count() >= 1, kind
        assert figure.get_by_test_id("figure-table").count() == 1, kind
    body = page.inner_text("body")
    assert "parameter combination" not in body and "combination 0" not in body


def test_a_tour_of_every_page_and_form(lab: dict[str, Any]) -> None:
    base = lab["base"]
    problems: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("pageerror", lambda e: problems.append(f"{page.url}: {e}"))

            def on_console(message: ConsoleMessage) -> None:
                if message.type == "error":
                    problems.append(f"{page.url}: console: {message.text}")

            def on_failed(request: Request) -> None:
                if not (request.url.endswith("/events") and request.failure == "net::ERR_ABORTED"):
                    problems.append(f"{page.url}: failed {request.url} {request.failure}")

            page.on("console", on_console)
            page.on("requestfailed", on_failed)
            page.goto(f"{base}/login")
            shot(page, "login")
            page.fill("#username", "admin")
            page.fill("#password", ADMIN_PASSWORD)
            page.click("#login-submit")
            expect(page.get_by_test_id("whoami")).to_contain_text("admin (admin)")

            overview(page, lab)
            run_pages(page, lab)
            compare(page, lab)
            history(page, lab)
            forms(page, lab)
            thesis(page, lab)
            page.goto(f"{base}/audit")
            shot(page, "audit")
        finally:
            browser.close()
    assert problems == []


def overview(page: Page, lab: dict[str, Any]) -> None:
    page.goto(f"{lab['base']}/machines")
    shot(page, "machines")
    page.get_by_test_id("overview-lab-tour").click()
    expect(page.locator("h1")).to_contain_text("lab-tour")
    tree = page.locator("[data-suite='search-tree']")
    expect(tree.get_by_test_id("latest-run")).to_contain_text(f"#{lab['trees'][1]}")
    expect(tree.locator("h3")).to_have_text(
        [re.compile("LIBXAC against Berkeley DB"), re.compile("LIBXAC against LMDB")]
    )
    forest = tree.get_by_test_id("forest").first
    expect(forest.locator(".x-title")).to_have_text(
        "ratio median(LIBXAC) / median(Berkeley DB), log scale"
    )
    labels = forest.locator("g.row").evaluate_all("rows => rows.map(r => r.dataset.label)")
    assert (
        "LIBXAC advisory yes · block bytes 4096 · tree btree against Berkeley DB mode nosync"
        in labels
    )
    expect(forest.get_by_test_id("legend")).to_contain_text("ratio 1: no difference")
    # The legend names side B: no reader has to work out which system "B" is.
    expect(forest.get_by_test_id("legend")).to_contain_text("LIBXAC significantly")
    assert tree.locator("svg.sparkline").count() >= 12
    shot(page, "overview")


def run_pages(page: Page, lab: dict[str, Any]) -> None:
    base = lab["base"]
    page.goto(f"{base}/runs/{lab['trees'][1]}")
    throughput = page.locator("#insert-throughput-ops_s-dots")
    expect(throughput.locator(".x-title")).to_have_text(
        "throughput (operations/s; higher is better)"
    )
    legend = throughput.get_by_test_id("legend")
    for system in SYSTEMS:
        expect(legend).to_contain_text(system)
    expect(throughput.locator("text.row-group")).to_have_text(["LIBXAC", "Berkeley DB"])
    latency = page.locator("#insert-insert_latency-us-percentiles")
    expect(latency.locator(".x-title")).to_contain_text("percentile")
    expect(latency.locator("text.tick")).to_contain_text(["p50", "p90", "p99", "max"])
    top = page.locator("#insert-insert_latency-us-top_k")
    expect(top.locator(".x-title")).to_have_text("k (1: the most expensive sample)")
    expect(top.locator(".y-title")).to_have_text("insert latency (µs)")
    check_charts(page)
    shot(page, "run-search-tree")

    page.goto(f"{base}/runs/{lab['touch']}")
    lines = page.locator("[data-testid='figure'][data-kind='lines']")
    expect(lines.locator(".x-title")).to_have_text("n: pages each transaction touches")
    legend = lines.get_by_test_id("legend")
    expect(legend).to_contain_text("operating system: sigsegv_roundtrip")
    expect(legend).to_contain_text("LIBXAC · access read · advisory no: fitted a + c/n")
    expect(lines.locator("g.reference")).to_have_count(3)
    # Each floor is named on the chart itself, with its value and unit.
    expect(lines.locator("text.reference-label")).to_contain_text(
        [re.compile(r"operating system: sigsegv_roundtrip: [\d.]+ µs")]
    )
    expect(lines.locator("polyline.curve")).to_have_count(4)
    expect(page.get_by_test_id("single-values").first).to_contain_text("sigsegv_roundtrip")
    # Units in words in the tables' headers too: µs, not "us"; "no unit", not "1".
    expect(page.get_by_test_id("single-values").last).to_contain_text("c (µs; lower is better)")
    expect(page.get_by_test_id("single-values").last).to_contain_text(
        "r2 (no unit; higher is better)"
    )
    check_charts(page)
    shot(page, "run-page-touch")

    # The baseline form; then the first run's page says it is the baseline.
    page.goto(f"{base}/runs/{lab['trees'][0]}")
    page.click("#run-baseline")
    expect(page.get_by_test_id("baseline")).to_contain_text(
        "this run is the baseline of search-tree"
    )
    shot(page, "run-baseline")


def compare(page: Page, lab: dict[str, Any]) -> None:
    base = lab["base"]
    first, second = lab["trees"]
    page.goto(f"{base}/runs/{second}")
    page.get_by_test_id("compare-previous").click()
    expect(page.locator("#comparison h2")).to_have_text(f"run {second} against run {first}")
    expect(page.get_by_test_id("forest").locator("g.row")).to_have_count(15)
    shot(page, "compare-previous")

    page.goto(f"{base}/compare")
    runs = page.get_by_test_id("pick-runs")
    box = runs.locator("input.filter")
    expect(box).to_be_visible()
    box.fill("page-touch")
    hidden = runs.locator("#runs-a option").evaluate_all(
        "options => options.filter(o => o.hidden).map(o => o.textContent)"
    )
    assert hidden and all("page-touch" not in text for text in hidden)
    box.fill("")
    page.select_option("#runs-a", str(first))
    page.select_option("#runs-b", str(second))
    page.click("#compare-runs-submit")
    expect(page.get_by_test_id("summary")).to_contain_text("15 matched pairs")

    page.goto(f"{base}/compare")
    systems = page.get_by_test_id("pick-sut")
    systems.locator("#sut-run").select_option(str(second))
    systems.locator("#sut-a").select_option("lmdb")
    systems.locator("#sut-b").select_option("libxac")
    page.click("#compare-sut-submit")
    expect(page.locator("#comparison h2")).to_have_text("LIBXAC against LMDB")
    forest = page.get_by_test_id("forest")
    expect(forest.locator("g.row")).to_have_count(6)
    expect(page.get_by_test_id("differs").first).to_contain_text("against LMDB")
    expect(page.get_by_test_id("common")).to_contain_text("count 2000")
    shot(page, "compare-systems")

    page.goto(f"{base}/compare")
    expect(page.get_by_test_id("one-click")).to_contain_text("Against the baseline")
    shot(page, "compare")


def history(page: Page, lab: dict[str, Any]) -> None:
    page.goto(f"{lab['base']}/runs/{lab['trees'][1]}")
    figure = page.locator("#insert-throughput-ops_s-dots")
    # The table under the chart links each value's history; the last row is LMDB's.
    link = figure.get_by_test_id("figure-table").get_by_role("link", name="history").last
    page.goto(f"{lab['base']}{link.get_attribute('href')}")
    expect(page.get_by_test_id("history-chart")).to_have_attribute("data-ready", "true")
    expect(page.get_by_test_id("history-chart").locator("canvas")).to_have_count(1)
    expect(page.get_by_test_id("history-chart").locator(".u-legend")).to_contain_text(
        "LMDB: median"
    )
    expect(page.get_by_test_id("legend")).to_contain_text("a change point of the series")
    expect(page.get_by_test_id("history-table").locator("tbody tr")).to_have_count(2)
    shot(page, "history")


def forms(page: Page, lab: dict[str, Any]) -> None:
    base = lab["base"]
    # The matrix form: storage with the write cache on and off, now.
    page.goto(f"{base}/matrices/new")
    page.check(f"input[name='machine_ids'][value='{lab['machine_id']}']")
    page.check("input[name='suites'][value='storage']")
    page.check("input[name='factor.write_cache'][value='on']")
    page.check("input[name='factor.write_cache'][value='off']")
    shot(page, "matrix-form")
    page.click("#matrix-submit")
    page.wait_for_url(re.compile(r".*/queue\?matrix=\d+$"))
    matrix_id = page.url.rsplit("=", 1)[1]
    expect(page.get_by_test_id("queue").locator("tbody tr")).to_have_count(2)
    shot(page, "queue")

    # The agent runs both jobs; the factor's values are then compared from the page's form.
    client, agent = lab["client"], lab["agent"]
    for _ in range(2):
        job = claim(client, agent).json()
        records = storage_records(seed=int(job["job_id"]))
        state = job["params"]["write_cache"]  # what the agent set and read back
        for record in records:
            record["suite"] = "storage"
            record["env"] = env(cache=write_cache(state, state))
        assert upload(client, agent, job["job_id"], records).status_code == 201
        client.post(
            f"{AGENT}/jobs/{job['job_id']}/finish", json={"status": "succeeded"}, headers=agent
        )
    page.goto(f"{base}/compare")
    factor = page.get_by_test_id("pick-factor")
    factor.locator("#factor-matrix").select_option(matrix_id)
    factor.locator("#factor-name").select_option("write_cache")
    factor.locator("#factor-a").fill("on")
    factor.locator("#factor-b").fill("off")
    page.click("#compare-factor-submit")
    expect(page.locator("#comparison h2")).to_have_text("write_cache=off against write_cache=on")
    expect(page.get_by_test_id("forest").locator("g.row")).to_have_count(2)
    shot(page, "compare-factor")

    # Re-run, then cancel the new run.
    page.goto(f"{base}/queue?matrix={matrix_id}")
    page.get_by_test_id("queue-runs").locator("a[href^='/runs/']").first.click()
    page.click("#run-rerun")
    page.wait_for_url(re.compile(r".*/runs/\d+$"))
    expect(page.get_by_test_id("run-status")).to_have_attribute("data-status", "queued")
    page.click("#run-cancel")
    expect(page.get_by_test_id("run-status")).to_have_attribute("data-status", "cancelled")
    shot(page, "run-cancelled")

    # A schedule from the matrix form; disable it, then delete it.
    page.goto(f"{base}/matrices/new")
    page.check(f"input[name='machine_ids'][value='{lab['machine_id']}']")
    page.check("input[name='suites'][value='page-touch']")
    page.fill("#cron", "0 3 * * *")
    page.fill("#name", "nightly tour")
    page.click("#matrix-submit")
    page.wait_for_url(re.compile(r".*/schedules$"))
    row = page.get_by_test_id("schedules").locator("tr", has_text="nightly tour")
    expect(row).to_contain_text("0 3 * * *")
    row.get_by_role("button", name="Disable").click()
    expect(page.get_by_test_id("schedules").locator("tr", has_text="nightly tour")).to_contain_text(
        "disabled"
    )
    shot(page, "schedules")
    page.get_by_test_id("schedules").locator("tr", has_text="nightly tour").get_by_role(
        "button", name="Delete"
    ).click()
    expect(page.get_by_test_id("schedules").locator("tr", has_text="nightly tour")).to_have_count(0)

    # Tokens: create one (shown once), then revoke it.
    page.goto(f"{base}/tokens")
    page.fill("#token-name", "tour token")
    page.click("#token-submit")
    expect(page.get_by_test_id("secret")).to_have_text(re.compile(r"^xu_[A-Za-z0-9_-]{43}$"))
    shot(page, "token-created")
    page.goto(f"{base}/tokens")
    page.get_by_test_id("tokens").locator("tr", has_text="tour token").get_by_role(
        "button", name="Revoke"
    ).click()
    expect(page.get_by_test_id("tokens").locator("tr", has_text="tour token")).to_contain_text(
        "revoked"
    )
    shot(page, "tokens")

    # Users: create a viewer, then make them an operator.
    page.goto(f"{base}/users")
    page.fill("#new-username", "tour-viewer")
    page.fill("#new-password", "tour-password-0123")
    page.select_option("#new-role", "viewer")
    page.locator("#user-form button[type='submit']").click()
    row = page.get_by_test_id("users").locator("tr", has_text="tour-viewer")
    expect(row.locator("select[name='role']")).to_have_value("viewer")
    row.locator("select[name='role']").select_option("operator")
    row.get_by_role("button", name="Save").click()
    row = page.get_by_test_id("users").locator("tr", has_text="tour-viewer")
    expect(row.locator("select[name='role']")).to_have_value("operator")
    shot(page, "users")


def thesis(page: Page, lab: dict[str, Any]) -> None:
    page.goto(f"{lab['base']}/reproduction")
    page.select_option("#machine_id", str(lab["machine_id"]))
    page.click("#reproduction-submit")
    plan = page.get_by_test_id("reproduce-plan")
    expect(plan.locator("tbody tr")).to_have_count(9)
    expect(page.get_by_test_id("reproduce-estimate")).to_contain_text("How long")
    shot(page, "thesis")
    page.click("#reproduce-submit")
    expect(page.get_by_test_id("reproduce-queued")).to_contain_text("Queued 11 jobs on lab-tour")
    shot(page, "thesis-queued")
