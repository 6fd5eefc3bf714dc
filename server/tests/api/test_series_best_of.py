"""Results of a ``best_of`` profile (the watch profile) carry ``params.best_of``: they form
their own series, so a lab that moves its schedule from single runs to the best of three
does not see the lower statistic as a change (docs/change-points.md, "Best of several
runs")."""

from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.helpers import result_record
from tests.reproduction_helpers import register_machine, store_results
from tests.watch_helpers import PARAMS, alerts_of, upload_runs


def test_best_of_results_are_a_series_of_their_own(client: TestClient, app: FastAPI) -> None:
    machine, agent = register_machine(client, "best-of-a")
    upload_runs(client, machine, agent, [10.0] * 12, app=app)
    for _ in range(12):
        # 15 % below the single runs: what the best of three reads on a noisy machine.
        best = result_record(
            params={**PARAMS, "best_of": 3},
            samples=[8.5 * 0.99, 8.5, 8.5 * 1.01],
            library={"name": "libxac", "version": "0.1.0", "git_revision": "3f2a9c1d0e5b"},
        )
        store_results(client, machine, agent, "page-touch", [best])
        app.state.watcher.run_pass()
    listed = client.get("/api/v1/series", params={"machine_id": machine}).json()
    assert len(listed) == 2
    by_statistic = {}
    for entry in listed:
        series = client.get(f"/api/v1/series/{entry['key']}").json()
        values = {p["value"] for p in series["points"]}
        by_statistic[series["params"].get("best_of")] = (len(series["points"]), values)
    assert by_statistic == {None: (12, {10.0}), 3: (12, {8.5})}
    assert alerts_of(client, machine) == [], "two statistics in one series would read as a step"
