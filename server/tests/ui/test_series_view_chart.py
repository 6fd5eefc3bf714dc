"""The series page in headless Chromium: beside a timing series, its chart draws the view the
detector also watches (the same runs' other configurations taking the host's speed off), and
names it in the legend; a series without a view draws no such line."""

from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from playwright.sync_api import Page, sync_playwright

from tests.api.test_alerts import CONFIGURATIONS
from tests.live import ServerProcess, admin_token, browser_log_in
from tests.reproduction_helpers import register_machine, store_results
from tests.ui.test_browser import CHROMIUM, CHROMIUM_ARGS
from tests.watch_helpers import run_of
from xaclab_server.core.migrations import upgrade_head

RUNS = 8
VIEW_LABEL = "against the same runs' other configurations"


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """A server on SQLite with RUNS runs of four page_touch configurations on a host whose
    speed wanders, one series measured alone and one of a single run; yields the URL and the
    series' keys."""
    url = f"sqlite:///{tmp_path / 'xaclab.sqlite3'}"
    upgrade_head(url)
    token = admin_token(url)
    with ServerProcess(url, tmp_path / "server.log") as server:
        with httpx.Client(
            base_url=server.base_url, timeout=30, headers={"Authorization": f"Bearer {token}"}
        ) as client:
            machine, agent = register_machine(client, "views-chart")
            host = np.random.default_rng(3).lognormal(0.0, 0.10, RUNS)
            for speed in host:
                records = [
                    run_of(10.0 * (k + 1) * speed, **params)
                    for k, params in enumerate(CONFIGURATIONS)
                ]
                store_results(client, machine, agent, "page-touch", records)
            alone, alone_agent = register_machine(client, "alone-chart")
            for speed in host:
                store_results(client, alone, alone_agent, "page-touch", [run_of(5.0 * speed)])
            once, once_agent = register_machine(client, "once-chart")
            store_results(client, once, once_agent, "page-touch", [run_of(5.0)])
            keys = {
                name: client.get("/api/v1/series", params={"machine_id": m}).json()[0]["key"]
                for name, m in (("views", machine), ("alone", alone), ("once", once))
            }
        yield server.base_url, keys


def _chart_legend(page: Page, base: str, key: str) -> str:
    page.goto(f"{base}/series/{key}")
    page.wait_for_selector("[data-testid='series-chart'][data-ready='true']", timeout=10_000)
    return page.inner_text("[data-testid='series-chart'] .u-legend")


def test_the_series_chart_draws_the_view_beside_the_series(
    live: tuple[str, dict[str, str]],
) -> None:
    base, keys = live
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            browser_log_in(page, base)

            legend = _chart_legend(page, base, keys["views"])
            assert VIEW_LABEL in legend, legend
            assert "libxac on views-chart" in legend
            assert "grey dotted line" in page.inner_text("[data-testid='series-view-help']")
            # One value per run in the view's legend entry when the cursor is on a point.
            chart = page.locator("[data-testid='series-chart'] .u-over")
            box = chart.bounding_box()
            assert box is not None
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            row = page.locator(".u-legend .u-series", has_text=VIEW_LABEL)
            assert row.locator(".u-value").inner_text().endswith(" us")

            legend = _chart_legend(page, base, keys["alone"])
            assert VIEW_LABEL not in legend and "libxac on alone-chart" in legend
            assert page.locator("[data-testid='series-view-help']").count() == 0
        finally:
            browser.close()
    assert errors == []


def test_a_series_of_one_run_spans_hours_not_years(live: tuple[str, dict[str, str]]) -> None:
    """With no span to scale to, the time axis is the hour either side of the one run, not
    the years uPlot alone stretched it over."""
    base, keys = live
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            browser_log_in(page, base)
            drawn = "[data-testid='series-chart'][data-x-span-s]"
            _chart_legend(page, base, keys["once"])
            assert page.get_attribute(drawn, "data-x-span-s") == "7200"
            _chart_legend(page, base, keys["alone"])
            span = page.get_attribute(drawn, "data-x-span-s")
            assert span is not None and int(span) < 7200  # RUNS runs, seconds apart
        finally:
            browser.close()
