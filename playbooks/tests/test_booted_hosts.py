"""server.yml and site.yml against booted Debian 12 hosts, over SSH, with TLS on every hop.

Three hosts come up with labhosts (systemd-nspawn --boot, each in its own
network namespace on a private bridge): ``server`` gets server.yml,
``lab-01`` and ``lab-02`` get site.yml.  The lab CA lives in this test's
temporary directory (the "control machine").  The second run must report
changed=0 on every host.  Then the test talks to the real server from here,
over HTTPS and trusting only the lab CA: both agents registered over HTTPS
and are online, node_exporter answers on each lab host over HTTPS with basic
authentication only, Prometheus scrapes the server and both exporters over
HTTPS, a page-touch run succeeds on both, and an agent refuses the server
when its CA file is not the lab CA.

Needs root, systemd-nspawn and debootstrap; the first run builds the cached
root filesystem and wheelhouse under /var/cache/xaclab-labhosts.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import shutil
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from labhosts import Lab, build_wheelhouse
from labhosts.lab import WHEELHOUSE_MOUNT
from playbooks.tests.ansible_helpers import PLAYBOOKS, REPO, ansible_env, tool
from playbooks.tests.test_site import recap

# make test runs as root and scripts/install-deps.sh installs both tools; a
# machine without them cannot run this test, and that must show as a failure.
assert os.geteuid() == 0, "the booted-host test needs root (it creates namespaces and boots hosts)"
assert shutil.which("systemd-nspawn") and shutil.which("debootstrap"), (
    "install systemd-container and debootstrap"
)

SERVER, LABS = "xaclab-srv", ["lab-01", "lab-02"]
PORT = 8000
# Far from anything else on this machine; the lab's own namespaces only.
SUBNET = "10.213.0"


def snapshot_sources(root: Path) -> Path:
    """A frozen copy of the sources: a source changed mid-test rightly makes run two rebuild.

    XACLAB_LABHOSTS_SOURCE_REV=<git revision> takes them from that commit
    instead of the working tree (when others are editing it mid-change).
    """
    snap = root / "source"
    revision = os.environ.get("XACLAB_LABHOSTS_SOURCE_REV")
    if revision:
        snap.mkdir()
        archive = subprocess.run(
            [
                "git",
                "-C",
                str(REPO),
                "archive",
                "--format=tar",
                revision,
                "libxac",
                "agent",
                "server",
                "contracts",
            ],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(snap)], input=archive, check=True)
        shutil.rmtree(snap / "server" / "tests", ignore_errors=True)
        return snap
    shutil.copytree(
        REPO / "libxac",
        snap / "libxac",
        ignore=shutil.ignore_patterns("build", "build-*", "lib", "bin", "__pycache__"),
    )
    common = ("__pycache__", "*.egg-info", ".venv", ".pytest_cache", ".mypy_cache", ".ruff_cache")
    shutil.copytree(REPO / "agent", snap / "agent", symlinks=True, ignore=shutil.ignore_patterns(*common))
    shutil.copytree(
        REPO / "server",
        snap / "server",
        symlinks=True,
        ignore=shutil.ignore_patterns(*common, "node_modules", "tests"),
    )
    # The agent and the server depend on xaclab-contracts (the suites, the schemas).
    shutil.copytree(
        REPO / "contracts", snap / "contracts", ignore=shutil.ignore_patterns(*common, "build", "tests")
    )
    return snap


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    state = tmp_path_factory.mktemp("labhosts")
    wheels = build_wheelhouse(REPO)
    booted = Lab(state, subnet=SUBNET, binds={str(wheels): WHEELHOUSE_MOUNT})
    try:
        booted.up(3, names=[SERVER, *LABS])
        yield booted
    finally:
        booted.down()


def address(lab: Lab, name: str) -> str:
    return next(h.address for h in lab.hosts if h.name == name)


@pytest.fixture(scope="module")
def provision(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("provision")
    snap = snapshot_sources(root)
    token = secrets.token_hex(24)
    server_url = f"https://{address(lab, SERVER)}:{PORT}"
    offline_pip = ["--no-index", "--find-links", WHEELHOUSE_MOUNT]
    never_refresh = 10 * 365 * 86400
    revision = (
        subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        or "unknown"
    )
    extra = {
        "xaclab_libxac_source_dir": str(snap / "libxac"),
        "xaclab_libxac_git_revision": revision,
        "xaclab_agent_source_dir": str(snap / "agent"),
        "xaclab_server_source_dir": str(snap / "server"),
        "xaclab_agent_contracts_source_dir": str(snap / "contracts"),
        "xaclab_server_contracts_source_dir": str(snap / "contracts"),
        "xaclab_server_registration_token": token,
        "xaclab_agent_registration_token": token,
        "xaclab_agent_server_url": server_url,
        "xaclab_server_port": PORT,
        "xaclab_agent_pip_extra_args": offline_pip,
        "xaclab_server_pip_extra_args": offline_pip,
        # The hosts have every package already and no route to a mirror.
        "xaclab_libxac_apt_cache_valid_time": never_refresh,
        "xaclab_server_apt_cache_valid_time": never_refresh,
        "node_exporter_apt_cache_valid_time": never_refresh,
        "prometheus_apt_cache_valid_time": never_refresh,
        "prometheus_scrape_interval": "2s",
        "xaclab_agent_claim_wait": 5,
        # The control machine's lab CA: this test's own, thrown away with it.
        "lab_ca_dir": str(root / "lab-ca"),
    }
    (root / "vars.json").write_text(json.dumps(extra))
    (root / "inventory.ini").write_text(lab.inventory({"server": [SERVER], "lab": LABS}))
    return {"root": root, "server_url": server_url, "runs": [], "token": token}


def lab_trust(provision: dict[str, Any]) -> ssl.SSLContext:
    """Trust in the lab CA only (not the system's CAs)."""
    return ssl.create_default_context(cafile=str(provision["root"] / "lab-ca" / "ca.crt"))


def run_playbooks(provision: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    root = provision["root"]
    started = time.monotonic()
    proc = subprocess.run(
        [
            tool("ansible-playbook"),
            "-i",
            str(root / "inventory.ini"),
            "-e",
            f"@{root / 'vars.json'}",
            str(PLAYBOOKS / "server.yml"),
            str(PLAYBOOKS / "site.yml"),
        ],
        cwd=PLAYBOOKS,
        env=ansible_env(root / "ansible-home"),
        capture_output=True,
        text=True,
        timeout=1500,
    )
    provision["runs"].append(time.monotonic() - started)
    (root / f"run-{len(provision['runs'])}.log").write_text(proc.stdout + proc.stderr)
    return proc


@pytest.fixture(scope="module")
def first_run(provision: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return run_playbooks(provision)


@pytest.fixture(scope="module")
def second_run(
    provision: dict[str, Any], first_run: subprocess.CompletedProcess[str]
) -> subprocess.CompletedProcess[str]:
    assert first_run.returncode == 0, first_run.stdout[-6000:] + first_run.stderr[-3000:]
    return run_playbooks(provision)


def get_json(
    provision: dict[str, Any], path: str, body: dict[str, Any] | None = None, token: str | None = None
) -> Any:
    """The server's answer over HTTPS, its certificate checked against the lab CA."""
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"} if data else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(provision["server_url"] + path, data=data, headers=headers)
    with urllib.request.urlopen(request, timeout=30, context=lab_trust(provision)) as response:
        return json.load(response)


def test_first_run_provisions_every_host(first_run: subprocess.CompletedProcess[str]) -> None:
    assert first_run.returncode == 0, first_run.stdout[-6000:] + first_run.stderr[-3000:]
    hosts = recap(first_run.stdout)
    assert set(hosts) == {SERVER, *LABS}, hosts
    assert all(c["changed"] > 0 and c["failed"] == 0 for c in hosts.values()), hosts


def test_second_run_changes_nothing_on_every_host(second_run: subprocess.CompletedProcess[str]) -> None:
    assert second_run.returncode == 0, second_run.stdout[-6000:] + second_run.stderr[-3000:]
    hosts = recap(second_run.stdout)
    assert set(hosts) == {SERVER, *LABS}, hosts
    changed = {h: c for h, c in hosts.items() if c["changed"] or c["failed"] or c["unreachable"]}
    assert not changed, (changed, second_run.stdout[-6000:])


def test_agents_are_registered_and_online(
    provision: dict[str, Any], second_run: subprocess.CompletedProcess[str]
) -> None:
    deadline = time.monotonic() + 60
    while True:
        machines = {m["name"]: m for m in get_json(provision, "/api/v1/machines")}
        if set(LABS) <= set(machines) and all(machines[n]["online"] for n in LABS):
            break
        assert time.monotonic() < deadline, machines
        time.sleep(1)


def test_node_exporter_answers_over_tls_with_basic_auth_only(
    lab: Lab, provision: dict[str, Any], second_run: subprocess.CompletedProcess[str]
) -> None:
    password = (provision["root"] / "lab-ca" / "node-exporter.password").read_text().strip()
    basic = base64.b64encode(f"prometheus:{password}".encode()).decode()
    for name in LABS:
        url = f"https://{address(lab, name)}:9100/metrics"
        request = urllib.request.Request(url, headers={"Authorization": f"Basic {basic}"})
        with urllib.request.urlopen(request, timeout=10, context=lab_trust(provision)) as response:
            assert b"node_cpu_seconds_total" in response.read()
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url, timeout=10, context=lab_trust(provision))
        assert refused.value.code == 401


def test_the_server_speaks_only_tls(lab: Lab, second_run: subprocess.CompletedProcess[str]) -> None:
    with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):
        urllib.request.urlopen(f"http://{address(lab, SERVER)}:{PORT}/healthz", timeout=10)


def test_prometheus_scrapes_the_server_and_every_lab_host_over_tls(
    lab: Lab, second_run: subprocess.CompletedProcess[str]
) -> None:
    # Prometheus listens on the server host's loopback only; ask it from there.
    query = (
        "import json, urllib.request; t = json.load(urllib.request.urlopen("
        "'http://127.0.0.1:9090/api/v1/targets'))['data']['activeTargets']; "
        "print(json.dumps([[x['labels'].get('job'), x['labels'].get('machine'), x['health'], "
        "x['scrapeUrl'], x['lastError']] for x in t]))"
    )
    server = next(h for h in lab.hosts if h.name == SERVER)
    deadline = time.monotonic() + 60
    while True:
        targets = json.loads(lab.ssh(server, f'python3 -c "{query}"').stdout)
        up = {machine for job, machine, health, _url, _error in targets if job == "node" and health == "up"}
        server_up = any(job == "xaclab-server" and health == "up" for job, _m, health, _u, _e in targets)
        if up >= set(LABS) and server_up:
            break
        assert time.monotonic() < deadline, targets
        time.sleep(2)
    scraped = {url.split(":")[0] for job, _m, _h, url, _e in targets if job in ("node", "xaclab-server")}
    assert scraped == {"https"}, targets


def test_an_agent_refuses_a_server_its_ca_file_does_not_vouch_for(
    lab: Lab, provision: dict[str, Any], second_run: subprocess.CompletedProcess[str]
) -> None:
    """lab-01's installed agent, told to trust another CA than the lab's, registers nowhere."""
    other = provision["root"] / "other-ca"
    subprocess.run(
        [
            "sh",
            str(PLAYBOOKS / "roles" / "lab_ca" / "files" / "lab-ca.sh"),
            "init",
            str(other),
            "other CA",
            "2",
        ],
        check=True,
        capture_output=True,
    )
    pem = base64.b64encode((other / "ca.crt").read_bytes()).decode()
    host = next(h for h in lab.hosts if h.name == LABS[0])
    refused = lab.ssh(
        host,
        f"echo {pem} | base64 -d > /root/other-ca.crt && "
        "XACLAB_AGENT_CONFIG=/etc/xaclab/agent.toml XACLAB_AGENT_CA_FILE=/root/other-ca.crt "
        "XACLAB_AGENT_STATE_DIR=/root/other-state XACLAB_REGISTRATION_TOKEN=" + provision["token"] + " "
        "/opt/xaclab/agent/bin/xaclab-agent register --name impostor",
        check=False,
    )
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert (
        f"The server {provision['server_url']} presented a certificate that the CA file "
        "/root/other-ca.crt does not vouch for" in refused.stderr
    ), refused.stderr
    assert "impostor" not in {m["name"] for m in get_json(provision, "/api/v1/machines")}


@pytest.fixture(scope="module")
def admin_token(lab: Lab, second_run: subprocess.CompletedProcess[str]) -> str:
    """An admin's API token, made the way an operator does on a new server host:
    `xaclab-server create-admin` as the service user, with the service's settings."""
    server = next(h for h in lab.hosts if h.name == SERVER)
    password = secrets.token_urlsafe(18)
    made = lab.ssh(
        server,
        "set -a && . /etc/xaclab/server.env && set +a && cd /var/lib/xaclab-server && "
        f"XACLAB_ADMIN_PASSWORD={password} runuser -u xaclab -- "
        "/opt/xaclab/server/bin/xaclab-server create-admin --username admin --api-token booted-test",
    )
    return made.stdout.strip().splitlines()[-1]


def test_page_touch_run_succeeds_on_both_lab_hosts(provision: dict[str, Any], admin_token: str) -> None:
    machines = {m["name"]: m["id"] for m in get_json(provision, "/api/v1/machines")}
    runs = {
        name: get_json(
            provision,
            "/api/v1/runs",
            {"machine_id": machines[name], "suite": "page-touch", "profile": "quick", "params": {}},
            token=admin_token,
        )["run_id"]
        for name in LABS
    }
    deadline = time.monotonic() + 300
    status: dict[str, str] = {}
    while True:
        status = {name: get_json(provision, f"/api/v1/runs/{run}")["status"] for name, run in runs.items()}
        if all(s in ("succeeded", "failed") for s in status.values()):
            break
        assert time.monotonic() < deadline, status
        time.sleep(2)
    assert status == dict.fromkeys(LABS, "succeeded"), status
    for name, run in runs.items():
        results = get_json(provision, f"/api/v1/runs/{run}/results")
        assert results, name
        assert any(r["metric"] == "time_per_page" and r["sut"] == "libxac" for r in results), (
            name,
            results[:2],
        )


def test_every_host_keeps_the_controllers_git_history_and_an_agent_builds_a_revision(
    lab: Lab, provision: dict[str, Any], admin_token: str
) -> None:
    """The clone xaclab_libxac keeps (server host too) holds the controller's HEAD; the server
    refuses a revision its clone lacks; lab-01's agent builds HEAD from its clone and runs it."""
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    for host in lab.hosts:
        shown = lab.ssh(host, "git -c safe.directory='*' -C /var/lib/xaclab-libxac.git rev-parse HEAD")
        assert shown.stdout.strip() == head, host.name
    machines = {m["name"]: m["id"] for m in get_json(provision, "/api/v1/machines")}
    body = {"machine_id": machines[LABS[0]], "suite": "page-touch", "profile": "quick"}
    with pytest.raises(urllib.error.HTTPError) as refused:
        get_json(
            provision, "/api/v1/runs", {**body, "params": {"libxac_revision": "deadbeef0123"}}, admin_token
        )
    assert refused.value.code == 422
    assert "does not exist in the server's libxac repository" in refused.value.read().decode()
    run = get_json(
        provision,
        "/api/v1/runs",
        {**body, "params": {"libxac_revision": head[:12], "max_pages": 4}},
        admin_token,
    )["run_id"]
    deadline = time.monotonic() + 600
    while (status := get_json(provision, f"/api/v1/runs/{run}")["status"]) not in ("succeeded", "failed"):
        assert time.monotonic() < deadline, status
        time.sleep(2)
    assert status == "succeeded", get_json(provision, f"/api/v1/runs/{run}")
    results = get_json(provision, f"/api/v1/runs/{run}/results")
    assert results
    host = next(h for h in lab.hosts if h.name == LABS[0])
    built = lab.ssh(host, f"cat /var/lib/xaclab-agent/builds/{head}/ok")
    assert built.stdout.strip().endswith("passed, 0 failed"), built.stdout
