"""Shared fixtures: a fake benchmark program, a fake suite, an in-memory agent API."""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from xaclab_agent.config import Config
from xaclab_agent.jobrun import JobHooks, execute_job
from xaclab_agent.runner import RunOutcome

RESULT: dict[str, Any] = {
    "format": "xaclab-result",
    "format_version": 1,
    "suite": "fake",
    "benchmark": "fake_touch",
    "sut": "os",
    "params": {"n": 1},
    "metric": "time_per_page",
    "unit": "us",
    "better": "lower",
    "samples": [1.0, 2.0, 3.0],
    "library": {"name": "libxac", "version": "0.1.0", "git_revision": "abc"},
}

FAKE_SUITE = {
    "name": "fake",
    "title": "Fake",
    "description": "test suite",
    "programs": ["fake_bench"],
    "profiles": {"quick": ["--quick"], "full": []},
    "params": {
        "repetitions": {"type": "integer", "min": 1, "max": 100, "flag": "--reps", "help": ""},
        "ratio": {"type": "number", "min": 0, "max": 1, "flag": "--ratio", "help": ""},
        "advisory": {"type": "boolean", "flag": "--advisory", "help": ""},
        "access": {"type": "enum", "choices": ["read", "write"], "flag": "--access", "help": ""},
    },
}

# The fake program: prints its argv, cwd and TMPDIR as a result's params, two
# results, progress lines and a diagnostic; FAKE_MODE in a file picks a failure.
FAKE_PROGRAM = textwrap.dedent(
    """\
    import json, os, sys, time
    base = json.loads(os.environ.get("FAKE_RESULT") or {result!r})
    mode_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mode")
    mode = open(mode_file).read().strip() if os.path.exists(mode_file) else "ok"
    ran = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ran")
    open(ran, "a").write(json.dumps(sys.argv[1:]) + "\\n")
    open("scratch", "w").write("x")
    wc_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wc_path")
    extra = {{}}
    if os.path.exists(wc_path):
        extra["wc_seen"] = open(open(wc_path).read().strip()).read().strip()
    print("xaclab-progress 0.0 starting", file=sys.stderr, flush=True)
    print("diagnostic: hello", file=sys.stderr, flush=True)
    for i in range(2):
        r = dict(base, params={{"i": i, "argv": " ".join(sys.argv[1:]),
                               "cwd": os.getcwd(), "tmpdir": os.environ.get("TMPDIR", ""),
                               **extra}})
        print(json.dumps(r), flush=True)
        print("xaclab-progress %.1f step %d" % ((i + 1) / 2, i), file=sys.stderr, flush=True)
    if mode == "badline":
        print("this is not json", flush=True)
    if mode == "fail":
        print("fatal: disk on fire", file=sys.stderr, flush=True)
        sys.exit(3)
    if mode == "sleep":
        time.sleep(60)
    if mode == "env":
        print(json.dumps(dict(base, env={{}})), flush=True)
    """
).format(result=json.dumps(RESULT))


@dataclass
class FakeLab:
    bin_dir: Path
    suites_dir: Path
    work_dir: Path

    def set_mode(self, mode: str) -> None:
        (self.bin_dir / "mode").write_text(mode)

    def watch_write_cache(self, sysfs_file: Path) -> None:
        """Make the fake program report what ``sysfs_file`` says while it runs (wc_seen)."""
        (self.bin_dir / "wc_path").write_text(str(sysfs_file))

    def runs(self) -> list[list[str]]:
        ran = self.bin_dir / "ran"
        if not ran.exists():
            return []
        return [json.loads(line) for line in ran.read_text().splitlines()]


@pytest.fixture
def lab(tmp_path: Path) -> FakeLab:
    bin_dir = tmp_path / "bin"
    suites_dir = tmp_path / "suites"
    work_dir = tmp_path / "work"
    bin_dir.mkdir()
    suites_dir.mkdir()
    program = bin_dir / "fake_bench"
    program.write_text(f"#!{sys.executable}\n{FAKE_PROGRAM}")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    (suites_dir / "fake.json").write_text(json.dumps(FAKE_SUITE))
    return FakeLab(bin_dir, suites_dir, work_dir)


@dataclass
class FakeServer:
    """The agent API in memory, with switches to make it fail."""

    jobs: list[dict[str, Any]] = field(default_factory=list)
    calls: list[tuple[str, str]] = field(default_factory=list)
    progress: list[dict[str, Any]] = field(default_factory=list)
    uploads: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    finished: dict[int, dict[str, Any]] = field(default_factory=dict)
    fail_paths: dict[str, int] = field(default_factory=dict)
    logs: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)
    cancelled: set[int] = field(default_factory=set)
    heartbeats: int = 0
    token: str = "xa_test"

    def handler(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path.removeprefix("/api/agent/v1")
        kind = path.rsplit("/", 1)[-1]
        self.calls.append((request.method, path))
        if kind in self.fail_paths:
            return httpx.Response(self.fail_paths[kind], json={"detail": "down"})
        if path == "/register":
            return httpx.Response(201, json={"machine_id": 1, "agent_token": self.token})
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return httpx.Response(401, json={"detail": "unknown token"})
        body = json.loads(request.content) if request.content else {}
        if path == "/jobs/claim":
            pending = [j for j in self.jobs if j["job_id"] not in self.finished]
            return httpx.Response(200, json=pending[0]) if pending else httpx.Response(204)
        job_id = int(path.split("/")[2])
        if kind == "progress":
            self.progress.append(body)
            return httpx.Response(200, json={})
        if kind == "heartbeat":
            self.heartbeats += 1
            return httpx.Response(
                200, json={"status": "running", "cancel": job_id in self.cancelled}
            )
        if kind == "logs":
            self.logs.setdefault((job_id, body["seq"]), body)
            return httpx.Response(200, json={"stored": True})
        if kind == "results":
            duplicate = body["upload_id"] in self.uploads
            self.uploads.setdefault(body["upload_id"], body["results"])
            stored = 0 if duplicate else len(body["results"])
            return httpx.Response(200, json={"stored": stored, "duplicate": duplicate})
        if kind == "finish":
            self.finished[job_id] = body
            return httpx.Response(200, json={})
        return httpx.Response(404, json={"detail": "no such path"})

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handler)

    def results(self) -> list[dict[str, Any]]:
        return [r for upload in self.uploads.values() for r in upload]

    def log_text(self, job_id: int) -> str:
        return "".join(self.logs[k]["text"] for k in sorted(self.logs) if k[0] == job_id)


@pytest.fixture
def server() -> FakeServer:
    return FakeServer()


@pytest.fixture
def no_sleep() -> Callable[[float], None]:
    def sleep(_: float) -> None:
        return None

    return sleep


# --- a suite of one real program whose output each test sets (best_of, repeat_until) ---


@dataclass
class ScriptedSuite:
    """A suite whose one program is a real Python script started by the agent's runner.

    The script reads ``spec.json`` beside it (written by ``run``) for what to print and
    counts its own runs in ``runs`` beside it, so a test can see how often it ran.
    """

    config: Config
    name: str
    profile: str

    def run(
        self, specs: list[dict[str, Any]], profile: str | None = None, hooks: JobHooks | None = None
    ) -> RunOutcome:
        (self.config.bin_dir / "spec.json").write_text(json.dumps(specs))
        seen: list[dict[str, Any]] = []
        outcome = execute_job(
            self.config,
            suite_name=self.name,
            profile=profile or self.profile,
            params={},
            fingerprint={"fingerprint_version": 2},
            hooks=dataclasses.replace(hooks or JobHooks(), on_result=seen.append),
        )
        assert seen == outcome.results, "the hook sees the final results, once"
        return outcome

    def runs(self) -> int:
        return int((self.config.bin_dir / "runs").read_text())


MakeScriptedSuite = Callable[[dict[str, Any], str, str], ScriptedSuite]


@pytest.fixture
def scripted_suite(tmp_path: Path) -> MakeScriptedSuite:
    """Install SUITE with its one program, PROGRAM's source; PROFILE is what ``run`` runs."""

    def make(suite: dict[str, Any], program: str, profile: str) -> ScriptedSuite:
        bin_dir, suites_dir = tmp_path / "bin", tmp_path / "suites"
        bin_dir.mkdir()
        suites_dir.mkdir()
        (executable,) = suite["programs"]
        script = bin_dir / executable
        script.write_text(f"#!{sys.executable}\n{program}")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
        (suites_dir / f"{suite['name']}.json").write_text(json.dumps(suite))
        (tmp_path / "state").mkdir()
        config = Config(
            state_dir=tmp_path / "state",
            bin_dir=bin_dir,
            work_dir=tmp_path / "work",
            suites_dir=suites_dir,
            noisy_load=1000.0,
        )
        return ScriptedSuite(config, suite["name"], profile)

    return make


@pytest.fixture
def valid_result() -> dict[str, Any]:
    copy: dict[str, Any] = json.loads(json.dumps(RESULT))
    return copy


# --- a real loop device with ext4 on it, for the write-cache tests (root only) ---


@dataclass(frozen=True)
class LoopMount:
    device: str  # loopN
    mount_point: Path

    @property
    def write_cache_path(self) -> Path:
        return Path(f"/sys/block/{self.device}/queue/write_cache")

    def write_cache(self) -> str:
        return self.write_cache_path.read_text().strip()


def loop_devices_usable() -> bool:
    return os.geteuid() == 0 and Path("/dev/loop-control").exists()


def _run(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


@contextmanager
def loop_mount(base: Path, size_mib: int = 32) -> Iterator[LoopMount]:
    base.mkdir(parents=True, exist_ok=True)
    image = base / "disk.img"
    with image.open("wb") as handle:
        handle.truncate(size_mib * 1024 * 1024)
    mount_point = base / "mnt"
    mount_point.mkdir()
    device = _run("losetup", "--find", "--show", str(image))
    mounted = False
    try:
        _run("mkfs.ext4", "-q", "-F", device)
        _run("mount", device, str(mount_point))
        mounted = True
        loop = LoopMount(Path(device).name, mount_point)
        loop.write_cache_path.write_text("write back")
        yield loop
    finally:
        if mounted:
            subprocess.run(["umount", str(mount_point)], check=False)
        subprocess.run(["losetup", "-d", device], check=False)


LoopFactory = Callable[[Path], AbstractContextManager[LoopMount]]


@pytest.fixture
def loop_device() -> LoopFactory:
    """``with loop_device(base) as loop:``.  make test runs as root on a machine
    with loop devices; without them the write-cache tests cannot prove anything,
    so they fail instead of skipping."""
    assert loop_devices_usable(), "the write-cache tests need root and loop devices (losetup)"
    return loop_mount
