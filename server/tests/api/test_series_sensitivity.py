"""What a series can show, through the API and on its page: the noise measured between its
change points, and the smallest step the detector finds (services/sensitivity.py)."""

import math

from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.reproduction_helpers import register_machine
from tests.watch_helpers import alerts_of, probe_values, upload_runs


def _series(client: TestClient, machine_id: int) -> dict[str, object]:
    (listed,) = client.get("/api/v1/series", params={"machine_id": machine_id}).json()
    found: dict[str, object] = client.get(f"/api/v1/series/{listed['key']}").json()
    return found


def test_the_probe_step_is_not_counted_as_noise(client: TestClient, app: FastAPI) -> None:
    machine, agent = register_machine(client, "sense-a")
    upload_runs(client, machine, agent, probe_values(), app=app)
    assert len(alerts_of(client, machine)) == 1
    sensitivity = _series(client, machine)["sensitivity"]
    assert isinstance(sensitivity, dict)
    # The values are constant on either side of the change at run 13: no noise once the
    # stretches are cut there (across it, the 15 % step would read as 10 % noise), so the
    # minimum change (XACLAB_CHANGE_MIN_PERCENT, 3 %) is the smallest step.
    assert sensitivity["points"] == 24 and sensitivity["not_judged"] is None
    assert sensitivity["noise_percent"] == 0
    assert [s["points_after"] for s in sensitivity["smallest_step_percent"]] == [10, 25]
    assert all(math.isclose(s["percent"], 3.0) for s in sensitivity["smallest_step_percent"])


def test_a_noisy_series_says_a_5_percent_change_can_go_unseen(
    client: TestClient, app: FastAPI
) -> None:
    machine, agent = register_machine(client, "sense-b")
    values = [10.0 * (1.08 if i % 2 else 0.92) for i in range(20)]  # ±8 % run to run
    upload_runs(client, machine, agent, values, app=app)
    assert alerts_of(client, machine) == []
    series = _series(client, machine)
    sensitivity = series["sensitivity"]
    assert isinstance(sensitivity, dict)
    assert math.isclose(sensitivity["noise_percent"], 1.4826 * 8, rel_tol=1e-6)
    # From 20 points the noise is known to about ±1.17/sqrt(20) of itself.
    assert math.isclose(sensitivity["noise_known_to_percent"], 100 * math.sqrt(1.36 / 20))
    soon, later = (s["percent"] for s in sensitivity["smallest_step_percent"])
    assert soon > later > 12  # more than the noise: a 5 % step hides in it
    page = client.get(f"/series/{series['key']}")
    assert page.status_code == 200
    assert "What this series can show" in page.text and "11.9 %" in page.text
    assert "known to about ±26 % of its" in page.text
    assert 'data-testid="series-blind"' in page.text


def test_a_short_series_is_not_judged_yet(client: TestClient, app: FastAPI) -> None:
    machine, agent = register_machine(client, "sense-c")
    upload_runs(client, machine, agent, [10.0, 10.1, 9.9], app=app)
    series = _series(client, machine)
    sensitivity = series["sensitivity"]
    assert isinstance(sensitivity, dict)
    assert sensitivity["noise_percent"] is None and sensitivity["smallest_step_percent"] == []
    assert sensitivity["noise_known_to_percent"] is None
    assert sensitivity["not_judged"] == "3 of the 10 points it takes to judge the noise"
    page = client.get(f"/series/{series['key']}").text
    assert "Not judged yet: 3 of the 10 points it takes to judge the noise." in page
    assert 'data-testid="series-blind"' not in page


def test_a_series_on_a_few_clock_steps_is_judged_by_its_spread(
    client: TestClient, app: FastAPI
) -> None:
    """90 ns in most runs, 100 or 110 in the rest (a clock that moves 10 ns at a time): the
    median absolute deviation is 0, yet the runs scatter; the page says which noise it is."""
    machine, agent = register_machine(client, "sense-d")
    values = [90.0, 90.0, 100.0, 90.0, 90.0, 110.0, 90.0, 100.0, 90.0, 90.0] * 2
    upload_runs(client, machine, agent, values, app=app)
    assert alerts_of(client, machine) == []
    series = _series(client, machine)
    sensitivity = series["sensitivity"]
    assert isinstance(sensitivity, dict)
    # Nothing clipped at the 5th and 95th percentiles: sqrt((4 x 10² + 2 x 20²) / 20),
    # over the 0.912 that normal noise gives, relative to the median 90.
    spread = math.sqrt((4 * 100 + 2 * 400) / 20) / 0.91174 / 90
    assert math.isclose(sensitivity["noise_percent"], 100 * spread, rel_tol=1e-3)
    assert sensitivity["noise_not_a_bell"] is True
    page = client.get(f"/series/{series['key']}").text
    assert 'data-testid="series-not-a-bell"' in page and "9.4 %" in page
    # A bell-shaped series is judged by its median absolute deviation, as before.
    machine, agent = register_machine(client, "sense-e")
    upload_runs(
        client, machine, agent, [10.0 * (1.08 if i % 2 else 0.92) for i in range(20)], app=app
    )
    assert _series(client, machine)["sensitivity"]["noise_not_a_bell"] is False  # type: ignore[index]
