"""The cached Debian 12 root filesystem and Python wheelhouse the lab hosts boot from."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from xaclab_contracts.suites import debian_packages, load_suites

CACHE = Path(os.environ.get("XACLAB_LABHOSTS_CACHE", "/var/cache/xaclab-labhosts"))
MIRROR = os.environ.get("XACLAB_LABHOSTS_MIRROR", "http://deb.debian.org/debian")
SUITE = "bookworm"

# Everything the roles install, so their apt tasks find it present and the
# hosts never need the mirror.  Keep in step with the roles' package lists.
PACKAGES = (
    # booting, logging in, ansible's apt module
    "systemd",
    "systemd-sysv",
    "dbus",
    "openssh-server",
    "python3",
    "python3-apt",
    "sudo",
    "iproute2",
    "ca-certificates",
    "procps",
    # ansible's pip module (or python3-packaging)
    "python3-setuptools",
    # xaclab_libxac
    "build-essential",
    "make",
    "tar",
    # xaclab_libxac's git clone (lab hosts and the server host)
    "git",
    # xaclab_agent and xaclab_server
    "python3-venv",
    # node_exporter
    "prometheus-node-exporter",
    # xaclab_server
    "postgresql",
    # prometheus
    "prometheus",
    # xaclab_libxac's xaclab_libxac_system_packages: the systems under test's
    # packages, from the suites' declarations (Berkeley DB, LMDB, SQLite, PMDK,
    # RocksDB ...)
    *debian_packages(load_suites()),
)

# Debian starts the packaged services on boot; the roles must enable them.
DISABLED_UNITS = ("postgresql.service", "prometheus.service", "prometheus-node-exporter.service")

# Host keys are made per host at boot, before the unit's own `sshd -t`.
_SSH_OVERRIDE = (
    "[Service]\nExecStartPre=\nExecStartPre=/usr/bin/ssh-keygen -A\nExecStartPre=/usr/sbin/sshd -t\n"
)

# Wheel-building backends pip needs when it installs the agent and server
# from their source directories with --no-index.
BUILD_REQUIREMENTS = ("setuptools>=68", "wheel")


def _key(*parts: str) -> str:
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]


def _log(message: str) -> None:
    sys.stderr.write(f"labhosts: {message}\n")


def rootfs_path() -> Path:
    return CACHE / f"rootfs-{SUITE}-{_key(SUITE, MIRROR, *PACKAGES, *DISABLED_UNITS, 'v1')}"


def build_rootfs() -> Path:
    """The cached root filesystem, made with debootstrap on first use."""
    final = rootfs_path()
    if (final / ".complete").is_file():
        return final
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = final.with_name(final.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    _log(f"building {final} with debootstrap from {MIRROR} (first run only)")
    subprocess.run(
        [
            "debootstrap",
            "--variant=minbase",
            f"--include={','.join(PACKAGES)}",
            SUITE,
            str(partial),
            MIRROR,
        ],
        check=True,
    )
    _configure(partial)
    (partial / ".complete").write_text("ok\n")
    partial.rename(final)
    return final


def _configure(root: Path) -> None:
    for unit in DISABLED_UNITS:
        subprocess.run(["chroot", str(root), "systemctl", "disable", unit], check=False, capture_output=True)
    # An empty machine-id makes every boot generate its own.
    (root / "etc" / "machine-id").write_text("")
    dbus_id = root / "var" / "lib" / "dbus" / "machine-id"
    dbus_id.unlink(missing_ok=True)
    # Host keys are made per host at boot (ssh-keygen -A in the unit override).
    for key in (root / "etc" / "ssh").glob("ssh_host_*"):
        key.unlink()
    override = root / "etc" / "systemd" / "system" / "ssh.service.d"
    override.mkdir(parents=True, exist_ok=True)
    (override / "10-labhosts.conf").write_text(_SSH_OVERRIDE)
    (root / "etc" / "ssh" / "sshd_config.d" / "10-labhosts.conf").write_text(
        "PermitRootLogin prohibit-password\nPasswordAuthentication no\nUseDNS no\n"
    )
    # Units that only slow the boot or fight the namespace's fixed address.
    for unit in (
        "systemd-networkd-wait-online.service",
        "apt-daily.timer",
        "apt-daily-upgrade.timer",
        "e2scrub_all.timer",
        "fstrim.timer",
    ):
        subprocess.run(["chroot", str(root), "systemctl", "mask", unit], check=False, capture_output=True)
    # debootstrap leaves apt's lists empty; the roles' apt tasks only need
    # the packages' status, but a fresh "last update" stamp keeps
    # cache_valid_time from asking the mirror.
    (root / "var" / "lib" / "apt" / "periodic").mkdir(parents=True, exist_ok=True)
    (root / "var" / "lib" / "apt" / "periodic" / "update-success-stamp").touch()
    subprocess.run(["chroot", str(root), "apt-get", "clean"], check=False)


def wheelhouse_path(repo: Path) -> Path:
    requirements = [
        (repo / "contracts" / "pyproject.toml").read_text(),
        (repo / "agent" / "pyproject.toml").read_text(),
        (repo / "server" / "pyproject.toml").read_text(),
        *BUILD_REQUIREMENTS,
        f"{sys.version_info[:2]}",
    ]
    return CACHE / f"wheels-{_key(*requirements)}"


def build_wheelhouse(repo: Path, python: str = sys.executable) -> Path:
    """Wheels for the agent's, the server's and the contracts' dependencies, from PyPI on
    first use.

    The hosts run the same Debian 12 and Python 3.11 as this machine, so the
    wheels pip picks here install there.
    """
    final = wheelhouse_path(repo)
    if (final / ".complete").is_file():
        return final
    partial = final.with_name(final.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    _log(f"collecting wheels into {final} (first run only)")
    subprocess.run(
        [
            python,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--wheel-dir",
            str(partial),
            # contracts first: the agent and the server depend on it, and it is on no index.
            str(repo / "contracts"),
            str(repo / "agent"),
            str(repo / "server"),
        ],
        check=True,
    )
    subprocess.run(
        [
            python,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--only-binary=:all:",
            "--dest",
            str(partial),
            *BUILD_REQUIREMENTS,
        ],
        check=True,
    )
    # The project's own wheels are built from the copied source on each host.
    for own in partial.glob("xaclab_*.whl"):
        own.unlink()
    (partial / ".complete").write_text("ok\n")
    partial.rename(final)
    return final
