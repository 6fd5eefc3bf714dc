"""Configuration: defaults < TOML file < ``XACLAB_AGENT_*`` environment < command line.

The file is ``/etc/xaclab/agent.toml`` unless ``--config`` or
``XACLAB_AGENT_CONFIG`` names another; a missing default file is fine, a
missing named one is an error.  Keys (env variable = ``XACLAB_AGENT_`` + the
key in upper case):

==================  =====================================================
server              base URL of the xaclab server (else: the one registered with)
ca_file             PEM file of the CA(s) whose certificates the agent trusts for an
                    https:// server (the lab CA); default: the system's trusted CAs
name                this machine's name on the server (default: host name)
state_dir           agent token, registration and spool
bin_dir             the libxac benchmark programs
work_dir            parent of each job's working directory (the filesystem under test)
suites_dir          suite declarations (default: the ones xaclab-contracts ships)
claim_wait          long-poll wait in seconds, 0-60
progress_interval   minimum seconds between two progress messages
job_timeout         seconds before a job is stopped, 0 = no limit
allowed_dirs        directories a job's ``target_dir`` may name (besides work_dir);
                    a TOML list, or ``:``-separated in the environment
write_cache_backend ``auto`` (per disk: ata/scsi/nvme tool, else the kernel view)
                    or ``kernel`` (only ever the kernel view)
heartbeat_interval  seconds between heartbeats while a job runs
log_cap_bytes       most bytes of program output sent to the server per job
noisy_load          a run is flagged noisy above this load / runnable-task count
libxac_repo         the git clone a job's ``libxac_revision`` is built from
                    (the playbook's, roles/xaclab_libxac); unset: such jobs are refused
libxac_subdir       where libxac lives in that repository (``libxac``)
build_cache         where revisions are built (default: state_dir/builds)
build_keep          how many good builds the cache keeps (the newest used)
build_jobs          parallel make jobs for a build, 0 = one per CPU
build_timeout       seconds one build step may take, 0 = no limit
smoke_tests         the ``make check`` unit tests a build must pass before it runs
                    (a glob of tests/*.c names; default ``test_0[0-3]*``)
==================  =====================================================

Secrets are not configuration keys: the registration token comes from
``--registration-token-file``, ``XACLAB_REGISTRATION_TOKEN`` or the file
``XACLAB_REGISTRATION_TOKEN_FILE`` names (:func:`secret_from_env`), and the
agent token lives in the state dir.
"""

from __future__ import annotations

import os
import re
import socket
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from xaclab_contracts import secret_env

from xaclab_agent.errors import ConfigError

DEFAULT_CONFIG = Path("/etc/xaclab/agent.toml")
INSTALLED_BIN_DIR = Path("/usr/local/lib/xaclab/bin")
ENV_PREFIX = "XACLAB_AGENT_"
SMOKE_GLOB = re.compile(r"[A-Za-z0-9_*?\[\]-]{1,100}")
SUBDIR = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}(/[A-Za-z0-9_][A-Za-z0-9_.-]{0,99})*")


def _checkout_bin_dir() -> Path | None:
    """libxac/bin when the package runs from a checkout (an editable install)."""
    root = Path(__file__).resolve().parents[2]
    return root / "libxac" / "bin" if (root / "libxac" / "Makefile").is_file() else None


def _default_state_dir(env: Mapping[str, str]) -> Path:
    if os.geteuid() == 0:
        return Path("/var/lib/xaclab-agent")
    base = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "xaclab-agent"


@dataclass(frozen=True)
class Config:
    state_dir: Path
    bin_dir: Path
    work_dir: Path
    server: str | None = None
    ca_file: Path | None = None
    name: str | None = None
    suites_dir: Path | None = None
    claim_wait: int = 25
    progress_interval: float = 2.0
    job_timeout: float = 0.0
    allowed_dirs: tuple[Path, ...] = ()
    write_cache_backend: str = "auto"
    heartbeat_interval: float = 5.0
    log_cap_bytes: int = 1024 * 1024
    noisy_load: float = 1.0
    libxac_repo: Path | None = None
    libxac_subdir: str = "libxac"
    build_cache: Path | None = None
    build_keep: int = 10
    build_jobs: int = 0
    build_timeout: float = 1800.0
    smoke_tests: str = "test_0[0-3]*"

    @property
    def spool_dir(self) -> Path:
        return self.state_dir / "spool"

    @property
    def machine_name(self) -> str:
        return self.name or socket.gethostname().split(".")[0]

    def with_overrides(self, **overrides: Any) -> Config:
        """Apply command-line values; ``None`` means 'not given'."""
        given = {k: v for k, v in overrides.items() if v is not None}
        return _checked(replace(self, **_coerce(given)))


def load_config(path: Path | None = None, env: Mapping[str, str] | None = None) -> Config:
    env = os.environ if env is None else env
    named = path or (Path(env["XACLAB_AGENT_CONFIG"]) if env.get("XACLAB_AGENT_CONFIG") else None)
    values: dict[str, Any] = {}
    file = named or DEFAULT_CONFIG
    try:
        with file.open("rb") as handle:
            values.update(tomllib.load(handle))
    except FileNotFoundError:
        if named is not None:
            raise ConfigError(f"config file {file} does not exist") from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"config file {file} is unreadable: {exc}") from exc
    known = {f.name for f in fields(Config)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(f"config file {file}: unknown key(s) {', '.join(unknown)}")
    for key in known:
        if env.get(ENV_PREFIX + key.upper()):
            values[key] = env[ENV_PREFIX + key.upper()]
    values.setdefault("state_dir", _default_state_dir(env))
    values.setdefault("bin_dir", _checkout_bin_dir() or INSTALLED_BIN_DIR)
    values.setdefault("work_dir", Path("/var/tmp/xaclab-agent"))
    return _checked(Config(**_coerce(values)))


def secret_from_env(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """:func:`xaclab_contracts.secret_env.secret_from_env`, its refusals as ConfigError."""
    try:
        return secret_env.secret_from_env(name, env)
    except secret_env.SecretFileError as exc:
        raise ConfigError(str(exc)) from None


def _coerce(values: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        try:
            if key in (
                "state_dir",
                "bin_dir",
                "work_dir",
                "suites_dir",
                "ca_file",
                "libxac_repo",
                "build_cache",
            ):
                out[key] = Path(value).expanduser()
            elif key == "allowed_dirs":
                items = value.split(":") if isinstance(value, str) else list(value)
                out[key] = tuple(Path(str(v)).expanduser() for v in items if str(v))
            elif key in ("claim_wait", "log_cap_bytes", "build_keep", "build_jobs"):
                out[key] = int(value)
            elif key in (
                "progress_interval",
                "job_timeout",
                "heartbeat_interval",
                "noisy_load",
                "build_timeout",
            ):
                out[key] = float(value)
            else:
                out[key] = str(value)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"config value {key} = {value!r} is invalid: {exc}") from exc
    return out


def _checked(config: Config) -> Config:
    if not 0 <= config.claim_wait <= 60:
        raise ConfigError(f"claim_wait must be 0-60 seconds, not {config.claim_wait}")
    if config.progress_interval < 0 or config.job_timeout < 0:
        raise ConfigError("progress_interval and job_timeout must not be negative")
    if config.heartbeat_interval <= 0 or config.log_cap_bytes < 0 or config.noisy_load < 0:
        raise ConfigError(
            "heartbeat_interval must be positive, log_cap_bytes and noisy_load not negative"
        )
    if config.write_cache_backend not in ("auto", "kernel"):
        raise ConfigError(
            f"write_cache_backend must be auto or kernel, not {config.write_cache_backend!r}"
        )
    if any(not d.is_absolute() for d in config.allowed_dirs):
        raise ConfigError("every entry of allowed_dirs must be an absolute path")
    if config.server is not None and not config.server.startswith(("http://", "https://")):
        raise ConfigError(f"server must be an http:// or https:// URL, not {config.server!r}")
    if config.build_keep < 1 or config.build_jobs < 0 or config.build_timeout < 0:
        raise ConfigError(
            "build_keep must be at least 1, build_jobs and build_timeout not negative"
        )
    if not SMOKE_GLOB.fullmatch(config.smoke_tests) or not SUBDIR.fullmatch(config.libxac_subdir):
        raise ConfigError(
            "smoke_tests must be a glob of test names (letters, digits, _ - * ? [ ]) and "
            "libxac_subdir a relative path of plain names"
        )
    if config.ca_file is not None and not config.ca_file.is_absolute():
        raise ConfigError(f"ca_file must be an absolute path, not {str(config.ca_file)!r}")
    return config
