"""Boot N lab hosts: network namespaces, a bridge, overlays and systemd-nspawn.

Every resource a lab creates is written to ``state.json`` in its state
directory *before* it is created, so :meth:`Lab.down` (or ``python -m labhosts
down``) removes exactly what this lab made, even after a crash half-way up.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from labhosts.rootfs import build_rootfs

WHEELHOUSE_MOUNT = "/opt/xaclab-wheels"
BOOT_TIMEOUT = 120


class LabError(RuntimeError):
    """A lab host could not be created, booted or reached."""


@dataclass
class Host:
    name: str
    address: str
    netns: str
    veth: str
    root: str
    pid: int = 0


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(list(argv), capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise LabError(f"{' '.join(argv)}: exit {proc.returncode}: {proc.stderr.strip()}")
    return proc


class Lab:
    """A set of booted hosts on one bridge, described by ``state_dir/state.json``.

    ``subnet`` is the first three octets of a /24 that must not be in use on
    this machine: the bridge takes ``.1`` and host *i* takes ``.(10+i)``.
    """

    def __init__(
        self,
        state_dir: Path,
        *,
        subnet: str = "10.213.0",
        binds: dict[str, str] | None = None,
    ) -> None:
        self.state_dir = Path(state_dir).resolve()
        self.subnet = subnet
        self.binds = dict(binds or {})
        self.tag = ""
        self.bridge = ""
        self.hosts: list[Host] = []
        self.mounts: list[str] = []
        self.links: list[str] = []
        state = self.state_dir / "state.json"
        if state.is_file():
            self._load(json.loads(state.read_text()))

    # -- state ---------------------------------------------------------------

    def _load(self, data: dict[str, Any]) -> None:
        # The state file is this module's own output (see _save).
        self.tag = str(data["tag"])
        self.subnet = str(data["subnet"])
        self.bridge = str(data["bridge"])
        self.binds = {str(k): str(v) for k, v in data["binds"].items()}
        self.hosts = [Host(**h) for h in data["hosts"]]
        self.mounts = [str(m) for m in data["mounts"]]
        self.links = [str(link) for link in data["links"]]

    def _save(self) -> None:
        data = {
            "tag": self.tag,
            "subnet": self.subnet,
            "bridge": self.bridge,
            "binds": self.binds,
            "hosts": [asdict(h) for h in self.hosts],
            "mounts": self.mounts,
            "links": self.links,
        }
        tmp = self.state_dir / "state.json.tmp"
        tmp.write_text(json.dumps(data, indent=2))
        tmp.rename(self.state_dir / "state.json")

    @property
    def key(self) -> Path:
        return self.state_dir / "id_ed25519"

    @property
    def gateway(self) -> str:
        return f"{self.subnet}.1"

    # -- up ------------------------------------------------------------------

    def up(self, count: int, names: list[str] | None = None) -> list[Host]:
        """Create and boot ``count`` hosts; return once each answers over SSH."""
        if self.hosts:
            raise LabError(f"{self.state_dir} already holds a lab; run down first")
        names = names or [f"host{i + 1}" for i in range(count)]
        if len(names) != count or len(set(names)) != count:
            raise LabError("need one distinct name per host")
        self._check_subnet_free()
        rootfs = build_rootfs()
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.tag = secrets.token_hex(2)
        self.bridge = f"xlh{self.tag}br"
        self._save()
        try:
            self._make_key()
            self.links.append(self.bridge)
            self._save()
            _run("ip", "link", "add", self.bridge, "type", "bridge")
            _run("ip", "addr", "add", f"{self.gateway}/24", "dev", self.bridge)
            _run("ip", "link", "set", self.bridge, "up")
            for index, name in enumerate(names):
                self._make_host(index, name, rootfs)
            for host in self.hosts:
                self._boot(host)
            for host in self.hosts:
                self._wait_for_ssh(host)
        except BaseException:
            self.down()
            raise
        return self.hosts

    def _check_subnet_free(self) -> None:
        routes = _run("ip", "-4", "route", "show", "table", "all").stdout
        if f"{self.subnet}." in routes:
            raise LabError(f"{self.subnet}.0/24 is already routed here; choose another subnet")

    def _make_key(self) -> None:
        if not self.key.exists():
            _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "labhosts", "-f", str(self.key))

    def _make_host(self, index: int, name: str, rootfs: Path) -> None:
        host = Host(
            name=name,
            address=f"{self.subnet}.{10 + index}",
            netns=f"xlh-{self.tag}-{name}",
            veth=f"xlh{self.tag}v{index}",
            root=str(self.state_dir / name / "merged"),
        )
        self.hosts.append(host)
        self._save()
        _run("ip", "netns", "add", host.netns)
        self.links.append(host.veth)
        self._save()
        _run("ip", "link", "add", host.veth, "type", "veth", "peer", "name", "eth0", "netns", host.netns)
        _run("ip", "link", "set", host.veth, "master", self.bridge, "up")
        ns = ("ip", "-n", host.netns)
        _run(*ns, "addr", "add", f"{host.address}/24", "dev", "eth0")
        _run(*ns, "link", "set", "eth0", "up")
        _run(*ns, "link", "set", "lo", "up")
        _run(*ns, "route", "add", "default", "via", self.gateway)

        base = self.state_dir / name
        for part in ("upper", "work", "merged"):
            (base / part).mkdir(parents=True, exist_ok=True)
        self.mounts.append(host.root)
        self._save()
        _run(
            "mount",
            "-t",
            "overlay",
            "overlay",
            "-o",
            f"lowerdir={rootfs},upperdir={base / 'upper'},workdir={base / 'work'}",
            host.root,
        )
        root = Path(host.root)
        (root / "etc" / "hostname").write_text(f"{name}\n")
        hosts = "127.0.0.1 localhost\n" + "".join(f"{a} {n}\n" for n, a in [(name, host.address)])
        (root / "etc" / "hosts").write_text(hosts)
        ssh_dir = root / "root" / ".ssh"
        ssh_dir.mkdir(mode=0o700, exist_ok=True)
        (ssh_dir / "authorized_keys").write_text(self.key.with_suffix(".pub").read_text())
        os.chmod(ssh_dir / "authorized_keys", 0o600)

    def _boot(self, host: Host) -> None:
        log = open(self.state_dir / f"{host.name}.console.log", "wb")  # noqa: SIM115
        argv = [
            "systemd-nspawn",
            "--boot",
            "--quiet",
            "--register=no",
            "--keep-unit",
            f"--directory={host.root}",
            f"--machine={host.name}",
            f"--network-namespace-path=/run/netns/{host.netns}",
            "--console=passive",
            "--resolv-conf=off",
            "--timezone=off",
            "--link-journal=no",
        ]
        argv += [f"--bind-ro={src}:{dst}" for src, dst in self.binds.items()]
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        host.pid = proc.pid
        self._save()

    def _wait_for_ssh(self, host: Host) -> None:
        deadline = time.monotonic() + BOOT_TIMEOUT
        while time.monotonic() < deadline:
            if not _alive(host.pid):
                log = (self.state_dir / f"{host.name}.console.log").read_text(errors="replace")
                raise LabError(f"{host.name}: systemd-nspawn exited:\n{log[-3000:]}")
            try:
                with socket.create_connection((host.address, 22), timeout=2):
                    pass
                if self.ssh(host, "true", check=False, timeout=20).returncode == 0:
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise LabError(f"{host.name} did not answer over SSH within {BOOT_TIMEOUT}s")

    # -- use -----------------------------------------------------------------

    def ssh_options(self) -> list[str]:
        return [
            "-i",
            str(self.key),
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "LogLevel=ERROR",
            "-o",
            "ConnectTimeout=10",
            "-o",
            "BatchMode=yes",
        ]

    def ssh(
        self, host: Host, command: str, *, check: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            ["ssh", *self.ssh_options(), f"root@{host.address}", command],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and proc.returncode != 0:
            raise LabError(f"{host.name}: {command}: exit {proc.returncode}: {proc.stderr.strip()}")
        return proc

    def inventory(self, groups: dict[str, list[str]], host_vars: dict[str, str] | None = None) -> str:
        """An INI inventory with the given groups of host names, reached over SSH."""
        by_name = {h.name: h for h in self.hosts}
        common = (
            f"ansible_user=root ansible_python_interpreter=/usr/bin/python3 "
            f"ansible_ssh_private_key_file={self.key} "
            "ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
            "-o IdentitiesOnly=yes'"
        )
        lines = []
        for group, names in groups.items():
            lines.append(f"[{group}]")
            for name in names:
                extra = (host_vars or {}).get(name, "")
                lines.append(f"{name} ansible_host={by_name[name].address} {common} {extra}".rstrip())
            lines.append("")
        return "\n".join(lines)

    # -- down ----------------------------------------------------------------

    def down(self) -> None:
        """Stop every host and remove every namespace, link and mount this lab made."""
        for host in self.hosts:
            _stop(host.pid)
        for mount in reversed(self.mounts):
            if os.path.ismount(mount):
                _run("umount", mount, check=False)
                if os.path.ismount(mount):
                    _run("umount", "--lazy", mount, check=False)
        for host in self.hosts:
            if Path(f"/run/netns/{host.netns}").exists():
                _run("ip", "netns", "delete", host.netns, check=False)
        for link in reversed(self.links):
            if Path(f"/sys/class/net/{link}").exists():
                _run("ip", "link", "delete", link, check=False)
        self.hosts, self.mounts, self.links = [], [], []
        state = self.state_dir / "state.json"
        if state.exists():
            state.unlink()


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        # Not our child (a lab brought up by another process): ask the kernel.
        return Path(f"/proc/{pid}").exists() and "zombie" not in _proc_state(pid)
    return done == 0


def _proc_state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:")[1].split("\n")[0].lower()
    except (OSError, IndexError):
        return "zombie"


def _is_nspawn(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip() == "systemd-nspawn"
    except OSError:
        return False


def _stop(pid: int) -> None:
    """Power the container off (SIGTERM → clean shutdown), then kill what is left."""
    if not _alive(pid) or not _is_nspawn(pid):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.2)
    if _alive(pid):
        os.killpg(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.2)
