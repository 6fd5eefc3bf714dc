"""site.yml applied twice to this machine with every path redirected into a temp dir.

The first run must build and install LIBXAC and the agent; the second must
change nothing on any host (the PLAY RECAP's changed=0 on every line).  apt is
the only part that looks at the real system, and the packages are already
installed (scripts/install-deps.sh), so it reports ok.
"""

from __future__ import annotations

import json
import re
import shutil
import ssl
import stat
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from xaclab_testsupport import free_port

from playbooks.tests.ansible_helpers import PLAYBOOKS, REPO, ansible_env, tool

RECAP = re.compile(r"^(?P<host>\S+)\s+:\s+(?P<counts>(?:\w+=\d+\s*)+)$", re.MULTILINE)


def recap(output: str) -> dict[str, dict[str, int]]:
    """PLAY RECAP → {host: {"ok": n, "changed": n, ...}} for every host line."""
    _, _, tail = output.rpartition("PLAY RECAP")
    hosts = {}
    for match in RECAP.finditer(tail):
        counts = dict(pair.split("=") for pair in match["counts"].split())
        hosts[match["host"]] = {key: int(value) for key, value in counts.items()}
    return hosts


def test_recap_parses_every_host_line() -> None:
    text = (
        "PLAY RECAP *****\n"
        "lab-01   : ok=3    changed=0    unreachable=0    failed=0    skipped=1    rescued=0    ignored=0\n"
        "lab-02   : ok=3    changed=2    unreachable=0    failed=0    skipped=1    rescued=0    ignored=0\n"
    )
    assert recap(text) == {
        "lab-01": {
            "ok": 3,
            "changed": 0,
            "unreachable": 0,
            "failed": 0,
            "skipped": 1,
            "rescued": 0,
            "ignored": 0,
        },
        "lab-02": {
            "ok": 3,
            "changed": 2,
            "unreachable": 0,
            "failed": 0,
            "skipped": 1,
            "rescued": 0,
            "ignored": 0,
        },
    }


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("site")
    paths = {
        "root": root,
        "prefix": root / "prefix",
        "build": root / "build",
        "agent_src": root / "agent-src",
        "venv": root / "venv",
        "config": root / "etc",
        "state": root / "state",
        "work": root / "state" / "work",
        "units": root / "units",
        "home": root / "ansible-home",
        "lab_ca": root / "lab-ca",
        "node_exporter": root / "node-exporter",
    }
    # A frozen copy of the sources: the checkout may change while the test
    # runs, and a changed source rightly makes the second run rebuild.
    snapshot = root / "source"
    shutil.copytree(
        REPO / "libxac",
        snapshot / "libxac",
        ignore=shutil.ignore_patterns("build", "build-*", "lib", "bin", "__pycache__"),
    )
    shutil.copytree(
        REPO / "agent",
        snapshot / "agent",
        symlinks=True,
        ignore=shutil.ignore_patterns(
            "__pycache__", "*.egg-info", ".venv", ".pytest_cache", ".mypy_cache", ".ruff_cache"
        ),
    )
    # The agent depends on xaclab-contracts (the suites, the schemas).
    shutil.copytree(
        REPO / "contracts",
        snapshot / "contracts",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "tests", ".*_cache"),
    )
    revision = (
        subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        or "unknown"
    )
    (root / "inventory.ini").write_text(
        "[lab]\nlocalhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n"
    )
    extra = {
        # Root without sudo: the play's become has nothing to do here.
        "ansible_become": False,
        "xaclab_libxac_source_dir": str(snapshot / "libxac"),
        "xaclab_libxac_git_revision": revision,
        "xaclab_agent_source_dir": str(snapshot / "agent"),
        "xaclab_agent_contracts_source_dir": str(snapshot / "contracts"),
        "xaclab_libxac_prefix": str(paths["prefix"]),
        "xaclab_libxac_build_dir": str(paths["build"]),
        "xaclab_libxac_run_ldconfig": False,
        # Never refresh apt's lists from a test; the packages are installed already.
        "xaclab_libxac_apt_cache_valid_time": 10 * 365 * 86400,
        "xaclab_agent_src_dir": str(paths["agent_src"]),
        "xaclab_agent_venv_dir": str(paths["venv"]),
        "xaclab_agent_config_dir": str(paths["config"]),
        "xaclab_agent_state_dir": str(paths["state"]),
        "xaclab_agent_work_dir": str(paths["work"]),
        "xaclab_agent_systemd_unit_dir": str(paths["units"]),
        "xaclab_agent_manage_service": False,
        "xaclab_agent_server_url": "http://127.0.0.1:9",
        "xaclab_agent_name": "site-test",
        # node_exporter: only its arguments file and web configuration, redirected; no
        # service on this machine (the test below runs the exporter with them).
        "node_exporter_defaults_file": str(root / "prometheus-node-exporter"),
        "node_exporter_web_dir": str(root / "node-exporter"),
        "node_exporter_manage_service": False,
        "node_exporter_apt_cache_valid_time": 10 * 365 * 86400,
        # The lab CA on "the control machine", which is this one.
        "lab_ca_dir": str(root / "lab-ca"),
    }
    (root / "vars.json").write_text(json.dumps(extra))
    return paths


def run_site(lab: dict[str, Path]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [
            tool("ansible-playbook"),
            "-i",
            str(lab["root"] / "inventory.ini"),
            "-e",
            f"@{lab['root'] / 'vars.json'}",
            str(PLAYBOOKS / "site.yml"),
        ],
        cwd=PLAYBOOKS,
        env=ansible_env(lab["home"]),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    (lab["root"] / f"run-{len(list(lab['root'].glob('run-*.log'))) + 1}.log").write_text(
        proc.stdout + proc.stderr
    )
    return proc


@pytest.fixture(scope="module")
def first_run(lab: dict[str, Path]) -> subprocess.CompletedProcess[str]:
    return run_site(lab)


def test_first_run_succeeds(first_run: subprocess.CompletedProcess[str]) -> None:
    assert first_run.returncode == 0, first_run.stdout[-6000:] + first_run.stderr[-3000:]
    hosts = recap(first_run.stdout)
    assert hosts, first_run.stdout[-3000:]
    assert all(c["failed"] == 0 and c["unreachable"] == 0 for c in hosts.values()), hosts
    assert all(c["changed"] > 0 for c in hosts.values()), hosts


def test_installed_programs_run(lab: dict[str, Path], first_run: subprocess.CompletedProcess[str]) -> None:
    assert first_run.returncode == 0
    bin_dir = lab["prefix"] / "lib" / "xaclab" / "bin"
    suites = sorted((lab["prefix"] / "lib" / "xaclab" / "suites").glob("*.json"))
    assert suites, "no suite declarations installed"
    programs = {p for s in suites for p in json.loads(s.read_text())["programs"]}
    assert programs
    for program in sorted(programs):
        path = bin_dir / program
        assert path.is_file(), f"{program} is not installed"
        # Each program prints its usage on --help and exits 0 (a benchmark
        # program that cannot start at all fails here).
        proc = subprocess.run([str(path), "--help"], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"{program} --help: {proc.returncode} {proc.stderr[-2000:]}"
    assert (lab["prefix"] / "lib" / "libxac.a").is_file()
    assert (lab["prefix"] / "lib" / "libxac.so").resolve().is_file()
    assert (lab["prefix"] / "lib" / "libxac.so.0").resolve().is_file()
    assert (lab["prefix"] / "lib" / "pkgconfig" / "libxac.pc").is_file()
    assert (lab["prefix"] / "include" / "xac.h").is_file()
    stamp = (lab["prefix"] / "lib" / "xaclab" / "libxac.stamp").read_text()
    version = (REPO / "libxac" / "VERSION").read_text().strip()
    assert f"version: {version}\n" in stamp
    # The agent's fingerprint reads libxac's version above its bin_dir.
    assert (bin_dir.parent / "VERSION").read_text().strip() == version


def test_agent_is_installed_and_configured(
    lab: dict[str, Path], first_run: subprocess.CompletedProcess[str]
) -> None:
    assert first_run.returncode == 0
    agent = lab["venv"] / "bin" / "xaclab-agent"
    proc = subprocess.run([str(agent), "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    import tomllib

    config = tomllib.loads((lab["config"] / "agent.toml").read_text())
    assert config["server"] == "http://127.0.0.1:9"
    assert config["ca_file"] == str(lab["config"] / "ca.crt")
    assert (lab["config"] / "ca.crt").read_text() == (lab["lab_ca"] / "ca.crt").read_text()
    assert config["name"] == "site-test"
    assert config["bin_dir"] == str(lab["prefix"] / "lib" / "xaclab" / "bin")
    assert config["suites_dir"] == str(lab["prefix"] / "lib" / "xaclab" / "suites")
    assert config["state_dir"] == str(lab["state"])
    # The agent itself accepts the file: it refuses unknown keys.
    check = subprocess.run(
        [
            str(lab["venv"] / "bin" / "python"),
            "-c",
            "import sys; from pathlib import Path; from xaclab_agent.config import load_config;"
            " c = load_config(Path(sys.argv[1])); print(c.bin_dir)",
            str(lab["config"] / "agent.toml"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert check.returncode == 0, check.stderr
    unit = (lab["units"] / "xaclab-agent.service").read_text()
    for line in (
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "PrivateTmp=yes",
        f"ReadWritePaths={lab['state']} {lab['work']}",
    ):
        assert line in unit
    analyze = shutil.which("systemd-analyze")
    if analyze:
        verify = subprocess.run(
            [analyze, "verify", str(lab["units"] / "xaclab-agent.service")],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert verify.returncode == 0, verify.stdout + verify.stderr


def test_second_run_changes_nothing(
    lab: dict[str, Path], first_run: subprocess.CompletedProcess[str]
) -> None:
    assert first_run.returncode == 0
    second = run_site(lab)
    assert second.returncode == 0, second.stdout[-6000:] + second.stderr[-3000:]
    hosts = recap(second.stdout)
    assert hosts, second.stdout[-3000:]
    changed = {host: c for host, c in hosts.items() if c["changed"] != 0 or c["failed"] != 0}
    assert not changed, (changed, second.stdout[-6000:])


def test_the_lab_ca_stays_on_the_control_machine_and_issues_the_host_certificate(
    lab: dict[str, Path], first_run: subprocess.CompletedProcess[str]
) -> None:
    assert first_run.returncode == 0
    ca = lab["lab_ca"]
    assert stat.S_IMODE(ca.stat().st_mode) == 0o700
    assert stat.S_IMODE((ca / "ca.key").stat().st_mode) == 0o600
    assert stat.S_IMODE((ca / "hosts" / "localhost.key").stat().st_mode) == 0o600
    verify = subprocess.run(
        ["openssl", "verify", "-CAfile", str(ca / "ca.crt"), str(ca / "hosts" / "localhost.crt")],
        capture_output=True,
        text=True,
    )
    assert verify.returncode == 0, verify.stderr
    sans = subprocess.run(
        ["openssl", "x509", "-noout", "-ext", "subjectAltName", "-in", str(ca / "hosts" / "localhost.crt")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "DNS:localhost" in sans and "IP Address:127.0.0.1" in sans
    # The CA's key was never copied anywhere the hosts see.
    assert not list(lab["root"].glob("etc/**/ca.key")) and not list(lab["node_exporter"].glob("ca.key"))


def test_node_exporter_serves_tls_with_basic_auth_from_its_web_configuration(
    lab: dict[str, Path], first_run: subprocess.CompletedProcess[str]
) -> None:
    """The exporter itself (Debian's) runs with the web configuration the role wrote."""
    assert first_run.returncode == 0
    web = lab["node_exporter"] / "web.yml"
    assert stat.S_IMODE(web.stat().st_mode) == 0o640
    assert stat.S_IMODE((lab["node_exporter"] / "node.key").stat().st_mode) == 0o640
    arguments = (lab["root"] / "prometheus-node-exporter").read_text()
    assert f"--web.config.file={web}" in arguments
    port = free_port()
    exporter = subprocess.Popen(
        [
            "/usr/bin/prometheus-node-exporter",
            f"--web.listen-address=127.0.0.1:{port}",
            f"--web.config.file={web}",
            "--collector.disable-defaults",
            "--collector.cpu",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    trust = ssl.create_default_context(cafile=str(lab["lab_ca"] / "ca.crt"))
    password = (lab["lab_ca"] / "node-exporter.password").read_text().strip()
    url = f"https://127.0.0.1:{port}/metrics"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                answer = httpx.get(url, verify=trust, auth=("prometheus", password), timeout=5)
                break
            except httpx.TransportError:
                assert exporter.poll() is None and time.monotonic() < deadline
                time.sleep(0.2)
        assert answer.status_code == 200 and "node_cpu_seconds_total" in answer.text
        assert httpx.get(url, verify=trust, timeout=5).status_code == 401
        assert httpx.get(url, verify=trust, auth=("prometheus", "wrong"), timeout=5).status_code == 401
        # Plain HTTP gets Go's "client sent an HTTP request to an HTTPS server", no metrics.
        plain = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5)
        assert plain.status_code == 400 and "node_cpu" not in plain.text
    finally:
        exporter.terminate()
        exporter.wait(timeout=15)
