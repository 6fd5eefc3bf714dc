"""Bisection of a change point across libxac revisions, with an agent that measures a
revision by its place in a throw-away history (the culprit's commit and every later one
are 20 % slower)."""

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.conftest import add_user, clear_tables, make_settings
from tests.git_helpers import make_history
from tests.helpers import AGENT, claim, upload
from tests.reproduction_helpers import register_machine, store_results
from tests.watch_helpers import alerts_of, run_of, upload_runs
from xaclab_server.app import create_app

BEFORE, AFTER = 10.0, 12.0
# Run-to-run noise of about 0.35 %; eight runs a side (the rank test needs seven or more
# a side to reach p < 0.001 without ties).
WOBBLE = (0.0, 0.05, -0.04, 0.02, -0.03, 0.04, -0.01, 0.01)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    repo = tmp_path_factory.mktemp("libxac-history")
    return repo, make_history(repo, 12, other_every=3)


@pytest.fixture
def lab(db_url: str, history: tuple[Path, list[str]]) -> Iterator[tuple[TestClient, FastAPI]]:
    app = create_app(make_settings(db_url, libxac_git_dir=history[0]))
    with TestClient(app) as client:
        client.headers["Authorization"] = f"Bearer {add_user(app, 'bisect-admin', 'admin')}"
        yield client, app
    clear_tables(app)


def _level(hashes: list[str], culprit: int, revision: str, broken: set[int]) -> float | None:
    index = next(i for i, h in enumerate(hashes) if h.startswith(revision))
    if index in broken:
        return None
    return AFTER if index >= culprit else BEFORE


def _series(
    client: TestClient, app: FastAPI, hashes: list[str], *, until_alert: bool = False
) -> tuple[int, dict[str, str]]:
    """Eight runs of the first revision, then runs of the last, 20 % slower: eight, or with
    ``until_alert`` only until the watcher raises the alert."""
    machine, agent = register_machine(client, "bisect-01")
    before = [BEFORE + w for w in WOBBLE]
    upload_runs(client, machine, agent, before, revisions=[hashes[0][:12]] * len(before), app=app)
    for wobble in WOBBLE:
        upload_runs(client, machine, agent, [AFTER + wobble], revisions=[hashes[-1][:12]], app=app)
        if until_alert and alerts_of(client, machine):
            break
    return machine, agent


def _agent_runs_jobs(
    client: TestClient,
    app: FastAPI,
    agent: dict[str, str],
    records_of: Callable[[str], list[dict[str, Any]] | None],
) -> list[str]:
    """Claim and run every job the bisection queues, uploading ``records_of(revision)`` (None:
    the job fails); the revisions run, in order."""
    ran = []
    for _ in range(40):
        job = claim(client, agent)
        if job.status_code == 204:
            break
        body = job.json()
        revision = body["params"]["libxac_revision"]
        ran.append(revision)
        records = records_of(revision)
        if records is None:
            status = "failed"
        else:
            sent = upload(client, agent, body["job_id"], records)
            assert sent.status_code == 201, sent.text
            status = "succeeded"
        done = client.post(
            f"{AGENT}/jobs/{body['job_id']}/finish", json={"status": status}, headers=agent
        )
        assert done.status_code == 200
        app.state.watcher.run_pass()
    return ran


def _agent_runs_bisection(
    client: TestClient,
    app: FastAPI,
    agent: dict[str, str],
    hashes: list[str],
    culprit: int,
    *,
    broken: frozenset[int] = frozenset(),
    halfway: frozenset[int] = frozenset(),
) -> list[str]:
    """Run every job the bisection queues at the level of its revision; the revisions run."""

    def records_of(revision: str) -> list[dict[str, Any]] | None:
        value = _level(hashes, culprit, revision, set(broken))
        if hashes.index(revision) in halfway:  # exactly between the two levels (the means)
            value = (BEFORE + AFTER) / 2 + sum(WOBBLE) / len(WOBBLE)
        return None if value is None else [run_of(value, revision=revision[:12])]

    return _agent_runs_jobs(client, app, agent, records_of)


def test_a_click_bisects_down_to_the_first_revision_on_the_far_side(
    lab: tuple[TestClient, FastAPI], history: tuple[Path, list[str]]
) -> None:
    client, app = lab
    _repo, hashes = history
    machine, agent = _series(client, app, hashes)
    (alert,) = alerts_of(client, machine)
    assert (alert["before"]["revision"], alert["after"]["revision"]) == (
        hashes[0][:12],
        hashes[-1][:12],
    )
    started = client.post(f"/api/v1/alerts/{alert['id']}/bisections")
    assert started.status_code == 201, started.text
    assert started.json()["candidates"] == 11  # the libxac commits after the good one
    ran = _agent_runs_bisection(client, app, agent, hashes, culprit=7)
    # Binary search over 11 candidates, the last known bad: at most 4 runs.
    assert 3 <= len(ran) <= 4 and hashes[7] in ran and hashes[6] in ran
    shown = client.get(f"/api/v1/alerts/{alert['id']}").json()["bisection"]
    assert shown["state"] == "done" and shown["culprit"] == hashes[7]
    assert shown["confidence"] > 0.99
    assert f"is {hashes[7][:12]}" in shown["message"]
    assert all(s["subject"].startswith("libxac: step") for s in shown["steps"])
    # The bisection's runs stay out of the detector's points: still one alert, same numbers.
    assert [a["id"] for a in alerts_of(client, machine)] == [alert["id"]]
    key = alert["series"]["key"]
    points = client.get(f"/api/v1/series/{key}", params={"bisections": False}).json()["points"]
    assert len(points) == 16
    everything = client.get(f"/api/v1/series/{key}").json()["points"]
    assert len(everything) == 16 + len(ran)
    assert {p["bisection_id"] for p in everything[16:]} == {shown["id"]}

    # In time order the bisection's revisions come last; by revision they sit between
    # the two sides, in the order of the git history.
    def places(points: list[dict[str, str]]) -> list[int]:
        return [
            next(i for i, h in enumerate(hashes) if h.startswith(p["revision"])) for p in points
        ]

    by_revision = client.get(f"/api/v1/series/{key}", params={"order": "revision"}).json()
    assert places(everything) != sorted(places(everything))
    assert places(by_revision["points"]) == sorted(places(everything))
    again = client.post(f"/api/v1/alerts/{alert['id']}/bisections")
    assert again.status_code == 201  # a finished bisection may be repeated


def test_a_revision_that_fails_is_skipped_and_one_in_doubt_is_run_again(
    lab: tuple[TestClient, FastAPI], history: tuple[Path, list[str]]
) -> None:
    client, app = lab
    _repo, hashes = history
    machine, agent = _series(client, app, hashes)
    (alert,) = alerts_of(client, machine)
    client.post(f"/api/v1/alerts/{alert['id']}/bisections")
    ran = _agent_runs_bisection(
        client, app, agent, hashes, culprit=4, broken=frozenset({6}), halfway=frozenset({3})
    )
    shown = client.get(f"/api/v1/alerts/{alert['id']}").json()["bisection"]
    # Revision 3 measures exactly between the levels: it may go either way, and says so.
    assert shown["state"] == "done" and shown["culprit"] in (hashes[3], hashes[4]), shown
    by_revision = {s["revision"]: s for s in shown["steps"]}
    if hashes[6] in by_revision:
        assert by_revision[hashes[6]]["side"] == "skip"
        assert "failed" in by_revision[hashes[6]]["reason"]
    doubtful = by_revision[hashes[3]]
    assert ran.count(hashes[3]) == 3 and len(doubtful["runs"]) == 3  # bisect_max_runs
    assert doubtful["confidence"] == pytest.approx(0.5)
    # Its doubt is in the answer's confidence.
    assert shown["confidence"] == pytest.approx(0.5, abs=0.01)


def test_the_server_bisects_a_new_regression_by_itself_when_asked(
    lab: tuple[TestClient, FastAPI], history: tuple[Path, list[str]]
) -> None:
    client, app = lab
    _repo, hashes = history
    assert client.put("/api/v1/watch/settings", json={"auto_bisect": True}).status_code == 200
    machine, agent = _series(client, app, hashes, until_alert=True)
    (alert,) = alerts_of(client, machine)
    assert alert["bisection"]["state"] == "running" and alert["bisection"]["automatic"]
    _agent_runs_bisection(client, app, agent, hashes, culprit=2)
    assert client.get(f"/api/v1/alerts/{alert['id']}").json()["bisection"]["culprit"] == hashes[2]


def test_what_cannot_be_bisected_is_refused_with_a_sentence(
    lab: tuple[TestClient, FastAPI], client: TestClient, app: FastAPI
) -> None:
    lab_client, lab_app = lab
    machine, agent = register_machine(lab_client, "bisect-same")
    values = [BEFORE + w for w in WOBBLE] * 2 + [AFTER + w for w in WOBBLE]
    upload_runs(lab_client, machine, agent, values, app=lab_app)
    (alert,) = alerts_of(lab_client, machine)
    refused = lab_client.post(f"/api/v1/alerts/{alert['id']}/bisections")
    assert refused.status_code == 409
    assert "did not come with a libxac commit" in refused.json()["detail"]
    assert lab_client.post("/api/v1/alerts/999999/bisections").status_code == 404


CONFIGURATIONS: list[dict[str, Any]] = [
    {"access": access, "advisory": advisory}
    for access in ("write", "read")
    for advisory in (False, True)
]


def _records(level: float, host: float, revision: str, wobble: float) -> list[dict[str, Any]]:
    """A run of four configurations on a host ``host`` times slow; the first configuration
    at ``level`` (BEFORE or AFTER), the others unchanged."""
    return [
        {
            **run_of(
                (level if k == 0 else BEFORE * (k + 1)) * host * (1 + wobble * (k + 1) / 100),
                revision=revision,
                **params,
            ),
            "suite": "page-touch",
        }
        for k, params in enumerate(CONFIGURATIONS)
    ]


def test_a_change_found_against_the_other_configurations_is_bisected_in_that_view(
    lab: tuple[TestClient, FastAPI], history: tuple[Path, list[str]]
) -> None:
    """One configuration of four is 20 % slower from the culprit on, on a host that wanders
    by 25 % between runs; the bisection's runs come on a fast host when the revision is
    slow and on a slow host when it is fast, so that their points alone would say the
    opposite.  Against the same runs' other configurations, the view its change was found
    in, they say the truth."""
    client, app = lab
    _repo, hashes = history
    machine, agent = register_machine(client, "bisect-views")
    hosts = (1.0, 1.25, 0.8, 1.1, 0.9, 1.2, 0.85, 1.05)
    for level, revision in ((BEFORE, hashes[0]), (AFTER, hashes[-1])):
        for host, wobble in zip(hosts, WOBBLE, strict=True):
            store_results(
                client, machine, agent, "page-touch", _records(level, host, revision[:12], wobble)
            )
            app.state.watcher.run_pass()
    (alert,) = [
        a
        for a in alerts_of(client, machine)
        if a["series"]["params"]["access"] == "write" and not a["series"]["params"]["advisory"]
    ]
    assert alert["change"]["view"] == "relative"
    assert client.post(f"/api/v1/alerts/{alert['id']}/bisections").status_code == 201

    def records_of(revision: str) -> list[dict[str, Any]]:
        slow = hashes.index(revision) >= 7
        host = 0.8 if slow else 1.25  # the host hides the revision's level
        return _records(AFTER if slow else BEFORE, host, revision[:12], 0.0)

    _agent_runs_jobs(client, app, agent, records_of)
    shown = client.get(f"/api/v1/alerts/{alert['id']}").json()["bisection"]
    assert shown["state"] == "done" and shown["culprit"] == hashes[7], shown


# The scattering series: steady to a few parts in a million before the change, anything
# from 10 % to 90 % slower after it (a fit's r2 or slope made erratic by a slower xend).
SCATTER = (0.9, 0.1, 0.85, 0.15, 0.8, 0.2, 0.75, 0.25)


def _two_series(steady: float, scattered: float, revision: str) -> list[dict[str, Any]]:
    """A run of two configurations, too few for a view against each other: write (steady
    on both sides of the change) and read (scattering after it)."""
    return [
        {**run_of(steady, revision=revision, access="write"), "suite": "page-touch"},
        {**run_of(scattered, revision=revision, access="read"), "suite": "page-touch"},
    ]


def test_the_automatic_bisection_follows_the_series_steady_on_both_sides(
    lab: tuple[TestClient, FastAPI], history: tuple[Path, list[str]]
) -> None:
    """Both series step at the same run; in the change's pooled noise the scattering one
    stands out a hundred times more, but its points after the change do not say where a
    single run belongs.  The bisection takes the steady one, and the scattering series'
    points at the bisection's revisions (at the old level) do not mislead it."""
    client, app = lab
    _repo, hashes = history
    assert client.put("/api/v1/watch/settings", json={"auto_bisect": True}).status_code == 200
    machine, agent = register_machine(client, "bisect-scatter")
    for wobble in WOBBLE:
        store_results(
            client,
            machine,
            agent,
            "page-touch",
            _two_series(BEFORE + wobble, BEFORE * (1 + wobble / 1000), hashes[0][:12]),
        )
        app.state.watcher.run_pass()
    for wobble, scatter in zip(WOBBLE, SCATTER, strict=True):
        store_results(
            client,
            machine,
            agent,
            "page-touch",
            _two_series(AFTER + wobble, BEFORE * (1 + scatter), hashes[-1][:12]),
        )
        app.state.watcher.run_pass()
        if alerts_of(client, machine):
            break
    by_access = {a["series"]["params"]["access"]: a for a in alerts_of(client, machine)}
    assert set(by_access) == {"write", "read"}
    steady, scattered = by_access["write"], by_access["read"]
    assert (steady["before"]["run_id"], steady["after"]["run_id"]) == (
        scattered["before"]["run_id"],
        scattered["after"]["run_id"],
    )

    def in_pooled_noise(alert: dict[str, Any]) -> float:
        return float(alert["change"]["percent"] / alert["change"]["noise_percent"])

    assert in_pooled_noise(scattered) > 100 * in_pooled_noise(steady)
    assert scattered["bisection"] is None
    assert steady["bisection"]["state"] == "running" and steady["bisection"]["automatic"]

    def records_of(revision: str) -> list[dict[str, Any]]:
        slow = hashes.index(revision) >= 7
        return _two_series(AFTER if slow else BEFORE, BEFORE, revision[:12])

    _agent_runs_jobs(client, app, agent, records_of)
    shown = client.get(f"/api/v1/alerts/{steady['id']}").json()["bisection"]
    assert shown["state"] == "done" and shown["culprit"] == hashes[7], shown
