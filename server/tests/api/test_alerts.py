"""Series, change points and alerts through the API, on SQLite and PostgreSQL.

The issue's probe: machine A gets 24 runs of the same results and from run 13 on every
sample is 15 % slower; machine B gets 24 runs with no change.  The watcher runs after
every upload, as the server's does.
"""

import html
import re
import statistics
from typing import Any

import numpy as np
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.conftest import add_user
from tests.reproduction_helpers import register_machine, store_results
from tests.watch_helpers import alerts_of, probe_values, run_of, upload_runs


def test_the_probe_one_alert_for_machine_a_at_run_13_none_for_b(
    client: TestClient, app: FastAPI
) -> None:
    a, agent_a = register_machine(client, "probe-a")
    b, agent_b = register_machine(client, "probe-b")
    seen: list[list[int]] = []

    def after_each(index: int, _run: int) -> None:
        seen.append([x["id"] for x in alerts_of(client, a)])

    runs_a = upload_runs(client, a, agent_a, probe_values(), app=app, after_each=after_each)
    runs_b = upload_runs(client, b, agent_b, [10.0] * 24, app=app)

    (alert,) = alerts_of(client, a)
    assert alerts_of(client, b) == []
    assert alert["before"]["run_id"] == runs_a[11] and alert["after"]["run_id"] == runs_a[12]
    # Nothing before three slower runs were in (change_min_points), then one alert, the same
    # one after every later upload.
    assert seen[:14] == [[]] * 14 and seen[14:] == [[alert["id"]]] * 10
    change = alert["change"]
    assert abs(change["percent"] - 15.0) < 1e-9
    assert change["low_percent"] - 1e-9 <= 15.0 <= change["high_percent"] + 1e-9
    assert (change["points_before"], change["points_after"]) == (12, 12)
    assert alert["direction"] == "regression" and alert["state"] == "open"
    assert alert["series"]["machine"] == "probe-a" and alert["series"]["epoch"] == 1
    assert alert["before"]["revision"] == alert["after"]["revision"] == "3f2a9c1d0e5b"
    key = alert["series"]["key"]
    assert alert["links"]["history"] == f"/series/{key}"
    assert alert["links"]["compare"] == f"/compare?kind=runs&a={runs_a[11]}&b={runs_a[12]}"
    assert client.get(alert["links"]["compare"]).status_code == 200

    series = client.get(f"/api/v1/series/{key}").json()
    assert [p["run_id"] for p in series["points"]] == runs_a
    assert [p["value"] for p in series["points"]] == probe_values()
    assert [c["id"] for c in series["change_points"]] == [alert["id"]]
    listed = client.get("/api/v1/series", params={"machine_id": b}).json()
    assert len(listed) == 1 and listed[0]["key"] != key
    flat = client.get(f"/api/v1/series/{listed[0]['key']}").json()
    assert [p["run_id"] for p in flat["points"]] == runs_b and flat["change_points"] == []


def test_a_mean_below_zero_keeps_the_direction_of_the_shift(
    client: TestClient, app: FastAPI
) -> None:
    """A fit's intercept may be negative: a rise of a lower-is-better value is a regression,
    and its size is relative to the mean's magnitude; a mean before that may be zero has no
    interval."""
    tight, agent_t = register_machine(client, "intercept-tight")
    wobble = [0.0, 0.01, -0.01, 0.02, -0.02, 0.005, -0.005, 0.0] * 2  # sums to 0
    upload_runs(
        client, tight, agent_t, [-1.0 + w for w in wobble] + [2.0 + w for w in wobble], app=app
    )
    (alert,) = alerts_of(client, tight)
    assert alert["direction"] == "regression"
    change = alert["change"]
    assert abs(change["percent"] - 300.0) < 1e-6  # from -1 to 2: three times |mean before|
    assert change["low_percent"] - 1e-9 <= 300.0 <= change["high_percent"] + 1e-9
    around_zero, agent_z = register_machine(client, "intercept-zero")
    scatter = [0.3, -0.2, 0.1, -0.35, 0.25, -0.1, 0.05, -0.15] * 2
    upload_runs(client, around_zero, agent_z, scatter + [-5.0 + w for w in wobble], app=app)
    (alert,) = alerts_of(client, around_zero)
    assert alert["direction"] == "improvement"
    assert alert["change"]["low_percent"] is None and alert["change"]["high_percent"] is None
    page = client.get(alert["links"]["alert"])
    assert "no interval" in page.text


def test_a_series_is_one_machine_epoch_and_workload(client: TestClient, app: FastAPI) -> None:
    machine, agent = register_machine(client, "lab-series")
    upload_runs(client, machine, agent, [10.0, 10.0])
    from tests.reproduction_helpers import store_results
    from tests.watch_helpers import run_of

    store_results(client, machine, agent, "page-touch", [run_of(10.0, n=128)])
    # A param whose role is "observed" (the kernel's choice) does not make a new series.
    store_results(client, machine, agent, "page-touch", [run_of(10.0, access_control="mprotect")])
    listed = client.get("/api/v1/series", params={"machine_id": machine}).json()
    sizes = sorted(len(client.get(f"/api/v1/series/{s['key']}").json()["points"]) for s in listed)
    assert sizes == [1, 3]


def _one_alert(client: TestClient, app: FastAPI) -> dict[str, Any]:
    machine, agent = register_machine(client, "lab-states")
    upload_runs(client, machine, agent, probe_values(), app=app)
    (alert,) = alerts_of(client, machine)
    return alert


def test_alerts_are_acknowledged_dismissed_with_a_note_and_reopened(
    client: TestClient, app: FastAPI
) -> None:
    alert = _one_alert(client, app)
    url = f"/api/v1/alerts/{alert['id']}"
    acked = client.post(f"{url}/acknowledge", json={"note": "ann looks"})
    assert acked.status_code == 200 and acked.json()["state"] == "acknowledged"
    assert acked.json()["note"] == "ann looks"
    refused = client.post(f"{url}/dismiss", json={"note": "  "})
    assert refused.status_code == 422 and "needs a note" in refused.json()["detail"]
    assert client.get(url).json()["state"] == "acknowledged"
    dismissed = client.post(f"{url}/dismiss", json={"note": "the new fsync path, expected"})
    assert dismissed.json()["state"] == "dismissed"
    machine = alert["series"]["machine_id"]
    assert [x["id"] for x in alerts_of(client, machine, state="dismissed")] == [alert["id"]]
    assert alerts_of(client, machine, state="open") == []
    reopened = client.post(f"{url}/reopen")
    assert reopened.json()["state"] == "open" and reopened.json()["note"] == ""
    assert client.post("/api/v1/alerts/999999/acknowledge").status_code == 404


def test_only_operators_change_alerts(client: TestClient, app: FastAPI) -> None:
    alert = _one_alert(client, app)
    viewer = add_user(app, "vic", "viewer")
    url = f"/api/v1/alerts/{alert['id']}/acknowledge"
    assert client.post(url, headers={"Authorization": f"Bearer {viewer}"}).status_code == 403
    assert client.post(url, headers={"Authorization": ""}).status_code == 401
    assert (
        client.get(f"/api/v1/alerts/{alert['id']}", headers={"Authorization": ""}).json()["state"]
        == "open"
    )


def test_the_history_of_a_result_shows_the_change_point_the_detector_found(
    client: TestClient, app: FastAPI
) -> None:
    machine_id, agent = register_machine(client, "probe-history")
    runs = upload_runs(client, machine_id, agent, probe_values(), app=app)
    (alert,) = alerts_of(client, machine_id)
    # The run page links each result to its history (issue N's series, across epochs).
    page = client.get(f"/runs/{runs[-1]}").text
    links = set(re.findall(r'href="(/history\?[^"]+)"', page))
    assert len(links) == 1, links
    query = html.unescape(links.pop()).split("?", 1)[1]

    history = client.get(f"/api/v1/history?{query}").json()
    assert [p["run_id"] for p in history["points"]] == runs
    (change,) = history["change_points"]
    assert (change["run_before"], change["run_after"]) == (runs[11], runs[12])
    assert abs(change["change_percent"] - 15.0) < 1e-9
    assert change["low_percent"] - 1e-9 <= 15.0 <= change["high_percent"] + 1e-9
    assert f"alert #{alert['id']}" in change["description"]
    shown = client.get(f"/history?{query}").text
    assert "No change point has been found" not in shown
    assert "+15.0%" in shown and f"#{runs[11]} → #{runs[12]}" in shown


CONFIGURATIONS: list[dict[str, Any]] = [
    {"access": access, "advisory": advisory}
    for access in ("write", "read")
    for advisory in (False, True)
]


def test_one_configurations_step_is_found_against_the_same_runs_other_configurations(
    client: TestClient, app: FastAPI
) -> None:
    """Four configurations of page_touch a run, on a host whose speed wanders by 10 % from
    run to run; from run 16 on the first is 6 % slower.  The series alone hides that in the
    host's noise; against the same runs' other three configurations it is the only change."""
    machine, agent = register_machine(client, "views")
    host = np.random.default_rng(7).lognormal(0.0, 0.10, 30)
    run_ids = []
    for index, speed in enumerate(host):
        records = [
            run_of(10.0 * (k + 1) * speed * (1.06 if k == 0 and index >= 15 else 1.0), **params)
            for k, params in enumerate(CONFIGURATIONS)
        ]
        run_ids.append(store_results(client, machine, agent, "page-touch", records))
        app.state.watcher.run_pass()
    (alert,) = alerts_of(client, machine)
    assert alert["change"]["view"] == "relative"
    assert "other configurations" in alert["change"]["view_words"]
    assert abs(alert["change"]["percent"] - 6.0) < 0.5
    assert (alert["series"]["params"]["access"], alert["series"]["params"]["advisory"]) == (
        "write",
        False,
    )
    assert (alert["before"]["run_id"], alert["after"]["run_id"]) == (run_ids[14], run_ids[15])
    page = client.get(f"/alerts/{alert['id']}")
    assert page.status_code == 200
    assert "the same runs&#39; other configurations" in page.text
    listing = client.get("/alerts")
    assert 'data-testid="found-in-view"' in listing.text
    series = client.get(f"/api/v1/series/{alert['series']['key']}").json()
    assert series["sensitivity"]["judged_in"] == "relative"
    assert series["sensitivity"]["noise_percent"] < 2, "the host's 10 % is taken off"
    # The view the page draws beside the series: the host's speed taken off every run, so
    # the series is flat on either side of its own 6 % step.
    assert "other configurations" in series["view"]["words"]
    in_view = {p["run_id"]: p["value"] for p in series["view"]["points"]}
    assert list(in_view) == run_ids
    before = [in_view[r] for r in run_ids[:15]]
    after = [in_view[r] for r in run_ids[15:]]
    assert max(before) / min(before) < 1.001 and max(after) / min(after) < 1.001
    assert abs(statistics.median(after) / statistics.median(before) - 1.06) < 1e-6
    raw = [p["value"] for p in series["points"]][:15]
    assert max(raw) / min(raw) > 1.2, "the series itself wanders with the host"
    page = client.get(alert["links"]["history"]).text
    assert 'data-testid="series-judged-in-view"' in page
    assert 'data-testid="series-view-help"' in page


def test_a_step_of_every_configuration_is_found_in_each_series_itself(
    client: TestClient, app: FastAPI
) -> None:
    """A kernel update slows all four configurations alike by 15 %: it cancels in their view
    against each other, and each series itself shows it."""
    machine, agent = register_machine(client, "kernel")
    for index in range(24):
        slower = 1.15 if index >= 12 else 1.0
        records = [
            run_of(10.0 * (k + 1) * slower, **params) for k, params in enumerate(CONFIGURATIONS)
        ]
        store_results(client, machine, agent, "page-touch", records)
        app.state.watcher.run_pass()
    found = alerts_of(client, machine)
    assert len(found) == 4
    assert {a["change"]["view"] for a in found} == {"series"}
    assert all(abs(a["change"]["percent"] - 15.0) < 1e-6 for a in found)
    assert 'data-testid="found-in-view"' not in client.get("/alerts").text
