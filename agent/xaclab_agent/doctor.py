"""``xaclab-agent doctor``: checks a lab machine and says what is wrong, in sentences.

Each check returns a :class:`Finding`; nothing is changed.  The exit status is
1 when any finding is a problem, else 0.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import httpx
from xaclab_contracts.suites import list_suites, load_suite

from xaclab_agent.blockdev import storage_for
from xaclab_agent.client import (
    API_PREFIX,
    tls_context,
    untrusted_certificate,
    untrusted_sentence,
)
from xaclab_agent.config import Config
from xaclab_agent.errors import ConfigError
from xaclab_agent.state import load_registration
from xaclab_agent.writecache import JOURNAL_NAME


@dataclass(frozen=True)
class Finding:
    ok: bool
    text: str


def check_root() -> Finding:
    if os.geteuid() == 0:
        return Finding(True, "The agent runs as root, so it can set the write cache.")
    return Finding(
        False,
        "The agent is not root: jobs asking for write_cache on/off or drop_caches will be "
        "refused. Run it as root (the systemd unit does).",
    )


def check_programs(config: Config) -> list[Finding]:
    findings = []
    for name in list_suites(config.suites_dir):
        suite = load_suite(name, config.suites_dir)
        for program in suite.programs:
            path = config.bin_dir / program
            if not (path.is_file() and os.access(path, os.X_OK)):
                findings.append(
                    Finding(
                        False,
                        f"Suite {name!r} needs {path}, which is missing or not executable; "
                        "build libxac (make -C libxac) or fix bin_dir.",
                    )
                )
                continue
            try:
                # In a throw-away directory: a program must never leave files
                # in the operator's current directory, even for --help.
                with tempfile.TemporaryDirectory(prefix="xaclab-doctor-") as scratch:
                    done = subprocess.run(
                        [str(path), "--help"],
                        capture_output=True,
                        timeout=10,
                        check=False,
                        cwd=scratch,
                    )
            except (OSError, subprocess.SubprocessError) as exc:
                findings.append(Finding(False, f"{path} does not run: {exc}."))
                continue
            if done.returncode not in (0, 1, 2):
                findings.append(
                    Finding(False, f"{path} --help exited {done.returncode}; is it built right?")
                )
    if not findings:
        findings.append(
            Finding(True, f"Every suite's programs are present and run ({config.bin_dir}).")
        )
    return findings


def check_libraries(config: Config) -> list[Finding]:
    """Every program of a system that needs Debian packages (the suites' "systems"
    declarations) finds its shared libraries: none that ``ldd`` reports "not found"."""
    findings = []
    suites = {name: load_suite(name, config.suites_dir) for name in list_suites(config.suites_dir)}
    checked: set[str] = set()
    for suite in suites.values():
        for program, systems in suite.systems.items():
            needs = [suite.system_decls[s] for s in systems if suite.system_decls[s].packages]
            path = config.bin_dir / program
            if not needs or program in checked or not path.is_file():
                continue  # check_programs reports a missing program
            checked.add(program)
            missing = [line.split()[0] for line in _ldd(path).splitlines() if "not found" in line]
            for decl in needs:
                if missing:
                    findings.append(
                        Finding(
                            False,
                            f"{decl.title}: {program} cannot load {', '.join(missing)}; install "
                            f"the Debian packages {', '.join(decl.packages)} "
                            "(scripts/install-deps.sh does).",
                        )
                    )
                else:
                    findings.append(Finding(True, f"{decl.title}: {program} finds its libraries."))
    return findings


def _ldd(path: Path) -> str:
    try:
        return subprocess.run(
            ["ldd", str(path)], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def check_work_dir(config: Config) -> list[Finding]:
    findings = []
    for directory in (config.work_dir, *config.allowed_dirs):
        if not directory.is_dir():
            findings.append(Finding(False, f"The directory under test {directory} does not exist."))
            continue
        storage = storage_for(directory)
        if storage.disks:
            disks = ", ".join(
                f"{d.name} ({d.kind}, {d.model or 'no model'})" for d in storage.disks
            )
            fstype = storage.mount.fstype if storage.mount else "?"
            findings.append(Finding(True, f"{directory} is on {fstype} over {disks}."))
        else:
            findings.append(
                Finding(
                    False,
                    f"{directory} is not on a local block device ({storage.error}); "
                    "storage numbers from it are not comparable and its write cache cannot be set.",
                )
            )
    journal = config.state_dir / JOURNAL_NAME
    if journal.exists():
        findings.append(
            Finding(
                False,
                f"A write-cache journal is waiting in {journal}: a change was not restored. "
                "Starting the agent replays it.",
            )
        )
    return findings


def check_server(config: Config, transport: httpx.BaseTransport | None = None) -> list[Finding]:
    try:
        registration = load_registration(config.state_dir)
    except ConfigError as exc:
        return [Finding(False, f"{exc}.")]
    server = config.server or registration.server
    headers = {"Authorization": f"Bearer {registration.agent_token}"}
    try:
        verify = tls_context(config.ca_file)
    except ConfigError as exc:
        return [Finding(False, f"{exc}.")]
    try:
        with httpx.Client(base_url=server, timeout=10, transport=transport, verify=verify) as http:
            http.get("/healthz").raise_for_status()
            reply = http.post(f"{API_PREFIX}/jobs/claim", params={"wait": 0}, headers=headers)
    except httpx.HTTPError as exc:
        refusal = untrusted_certificate(exc)
        if refusal is not None:
            return [Finding(False, untrusted_sentence(server, config.ca_file, refusal))]
        return [Finding(False, f"The server {server} cannot be reached: {exc}.")]
    if reply.status_code == 401:
        return [
            Finding(
                False,
                f"The server {server} answers, but refuses this agent's token; "
                "run 'xaclab-agent register' again.",
            )
        ]
    if reply.status_code not in (200, 204):
        return [Finding(False, f"The server {server} answered a claim with {reply.status_code}.")]
    return [Finding(True, f"The server {server} answers and accepts this agent's token.")]


def check_tools() -> list[Finding]:
    missing = [t for t in ("hdparm", "sdparm", "nvme") if shutil.which(t) is None]
    if not missing:
        return [Finding(True, "hdparm, sdparm and nvme-cli are installed.")]
    return [
        Finding(
            False,
            f"{', '.join(missing)} not installed: disks of that kind fall back to the kernel "
            "view of the write cache, which does not change the device.",
        )
    ]


def run_doctor(config: Config, *, check_server_too: bool = True) -> list[Finding]:
    findings = [check_root()]
    findings += check_programs(config)
    findings += check_libraries(config)
    findings += check_work_dir(config)
    findings += check_tools()
    if check_server_too:
        findings += check_server(config)
    return findings


def doctor_exit_status(findings: list[Finding]) -> int:
    return 0 if all(f.ok for f in findings) else 1
