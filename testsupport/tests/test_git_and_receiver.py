"""The throw-away git history and the webhook receiver the change-point tests use."""

import json
import urllib.error
import urllib.request
from pathlib import Path

from xaclab_testsupport.git import commit, git, start_libxac_repository
from xaclab_testsupport.receiver import Receiver


def test_a_libxac_repository_starts_from_the_committed_libxac(tmp_path: Path) -> None:
    repo = tmp_path / "libxac.git"
    first = start_libxac_repository(repo)
    assert (repo / "libxac" / "Makefile").is_file()
    (repo / "libxac" / "NOTES").write_text("x\n")
    second = commit(repo, "a note")
    assert git(repo, "rev-list", "--reverse", "HEAD").split() == [first, second]
    assert git(repo, "log", "-1", "--format=%an") == "xaclab tests"


def test_the_receiver_keeps_what_is_posted_and_answers_as_told() -> None:
    with Receiver(status=503).running() as receiver:
        request = urllib.request.Request(
            receiver.url,
            data=json.dumps({"event": "test", "n": 1}).encode(),
            headers={"Content-Type": "application/json", "X-Xaclab-Event": "test"},
        )
        try:
            urllib.request.urlopen(request, timeout=10)
        except urllib.error.HTTPError as exc:
            assert exc.code == 503
    assert receiver.bodies == [{"event": "test", "n": 1}]
    assert receiver.events() == ["test"] and receiver.headers[0]["X-Xaclab-Event"] == "test"
