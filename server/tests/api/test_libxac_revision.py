"""libxac_revision as a run factor: the server checks it names a commit of its libxac clone
(XACLAB_LIBXAC_GIT_DIR) and stores the commit's full hash; anything else is a 422."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import add_user, clear_tables, make_settings
from tests.git_helpers import git, make_history
from tests.reproduction_helpers import register_machine
from xaclab_server.app import create_app


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    repo = tmp_path_factory.mktemp("libxac-clone")
    return repo, make_history(repo, 4, other_every=2)


@pytest.fixture
def lab(db_url: str, history: tuple[Path, list[str]]) -> Iterator[TestClient]:
    app = create_app(make_settings(db_url, libxac_git_dir=history[0]))
    with TestClient(app) as client:
        client.headers["Authorization"] = f"Bearer {add_user(app, 'rev-admin', 'admin')}"
        yield client
    clear_tables(app)


def _run(client: TestClient, machine: int, **params: object) -> tuple[int, dict[str, Any]]:
    reply = client.post(
        "/api/v1/runs",
        json={"machine_id": machine, "suite": "page-touch", "profile": "quick", "params": params},
    )
    return reply.status_code, reply.json()


def test_a_revision_is_stored_as_its_commit(
    lab: TestClient, history: tuple[Path, list[str]]
) -> None:
    repo, hashes = history
    machine, _agent = register_machine(lab, "rev-01")
    for asked, full in (
        (hashes[1][:12], hashes[1]),
        (hashes[2], hashes[2]),
        ("main", git(repo, "rev-parse", "main")),
        ("HEAD~1", git(repo, "rev-parse", "HEAD~1")),
    ):
        code, body = _run(lab, machine, libxac_revision=asked)
        assert code == 201, body
        run = lab.get(f"/api/v1/runs/{body['run_id']}").json()
        assert run["params"]["libxac_revision"] == full


@pytest.mark.parametrize(
    ("asked", "words"),
    [
        ("deadbeefdead", "does not exist in the server's libxac repository"),
        ("no-such-branch", "does not exist in the server's libxac repository"),
        ("--upload-pack=touch", "must be a git revision"),
        ("main..HEAD", "without '..'"),
    ],
)
def test_a_revision_that_does_not_exist_is_refused(lab: TestClient, asked: str, words: str) -> None:
    machine, _agent = register_machine(lab, "rev-02")
    code, body = _run(lab, machine, libxac_revision=asked)
    assert code == 422 and words in body["detail"], body
    assert lab.get("/api/v1/queue").json() == []


def test_a_matrix_over_revisions_pins_every_job_and_refuses_a_bad_one_whole(
    lab: TestClient, history: tuple[Path, list[str]]
) -> None:
    _repo, hashes = history
    machine, _agent = register_machine(lab, "rev-03")
    spec = {
        "machine_ids": [machine],
        "suites": ["page-touch"],
        "profiles": ["quick"],
        "factors": {"libxac_revision": [hashes[0][:10], "main"]},
    }
    made = lab.post("/api/v1/matrices", json=spec)
    assert made.status_code == 201, made.text
    queued = {j["params"]["libxac_revision"] for j in lab.get("/api/v1/queue").json()}
    assert queued == {hashes[0], hashes[-1]}
    spec["factors"] = {"libxac_revision": ["main", "cafebabe1234"]}
    refused = lab.post("/api/v1/matrices", json=spec)
    assert refused.status_code == 422 and "'cafebabe1234' does not exist" in refused.text
    assert len(lab.get("/api/v1/queue").json()) == 2


def test_a_server_without_a_clone_says_so(client: TestClient) -> None:
    machine, _agent = register_machine(client, "rev-04")
    code, body = _run(client, machine, libxac_revision="main")
    assert code == 422 and "no libxac git repository (XACLAB_LIBXAC_GIT_DIR)" in body["detail"]
