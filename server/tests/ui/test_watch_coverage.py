"""What the watch can see, on the alerts page: per machine, the series that would show a
5 % change and those that may miss it, from the noise each series' last detection
measured (series.noise; services/watch_coverage.py)."""

import re

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import update

from tests.reproduction_helpers import register_machine
from tests.watch_helpers import probe_values, upload_runs
from xaclab_server.models import Machine


def _row(page: str, machine_id: int) -> str:
    found = re.search(rf'<tr data-machine-id="{machine_id}">(.*?)</tr>', page, re.S)
    assert found is not None, f"no coverage row for machine {machine_id}"
    return found.group(1)


def _counts(row: str) -> tuple[int, int]:
    shows = re.search(r'data-testid="coverage-shows">(\d+)<', row)
    blind = re.search(r'data-testid="coverage-blind">(\d+)<', row)
    assert shows is not None and blind is not None
    return int(shows.group(1)), int(blind.group(1))


def test_the_alerts_page_says_which_series_would_show_5_percent(
    client: TestClient, app: FastAPI
) -> None:
    quiet, agent_q = register_machine(client, "cover-quiet")
    upload_runs(client, quiet, agent_q, probe_values(), app=app)  # a step, no noise
    noisy, agent_n = register_machine(client, "cover-noisy")
    upload_runs(
        client, noisy, agent_n, [10.0 * (1.08 if i % 2 else 0.92) for i in range(20)], app=app
    )
    short, agent_s = register_machine(client, "cover-short")
    upload_runs(client, short, agent_s, [10.0, 10.1, 9.9], app=app)

    # The detector keeps each series' noise: 0 between the probe's change points, ±8 %
    # run to run in the noisy one, none judged from 3 points.
    listed = {
        m: client.get("/api/v1/series", params={"machine_id": m}).json()[0]
        for m in (quiet, noisy, short)
    }
    assert (listed[quiet]["noise_percent"], listed[quiet]["noise_points"]) == (0, 24)
    assert abs(listed[noisy]["noise_percent"] - 1.4826 * 8) < 1e-9
    assert (listed[short]["noise_percent"], listed[short]["noise_points"]) == (None, 3)

    page = client.get("/alerts").text
    assert "What the watch can see" in page
    assert _counts(_row(page, quiet)) == (1, 0)
    noisy_row = _row(page, noisy)
    assert _counts(noisy_row) == (0, 1)
    assert f'href="/series/{listed[noisy]["key"]}"' in noisy_row and "(11.9 %;" in noisy_row
    short_row = _row(page, short)
    assert _counts(short_row) == (0, 0) and '<td class="num">1</td>' in short_row

    # The machine filter narrows the table too.
    only = client.get("/alerts", params={"machine_id": noisy}).text
    assert f'data-machine-id="{noisy}"' in only and f'data-machine-id="{quiet}"' not in only

    # A machine in a new epoch has no series of it yet: the old epoch's are not counted.
    with app.state.sessionmaker() as session:
        session.execute(update(Machine).where(Machine.id == noisy).values(epoch=2))
        session.commit()
    assert f'data-machine-id="{noisy}"' not in client.get("/alerts").text
