"""The ``xaclab-agent`` command: register, run, bench, fingerprint, doctor.

Exit status: 0 success; 1 a job or bench failed, or the server was unreachable
and something stayed in the spool; 2 bad usage, configuration or parameters,
or a server whose TLS certificate the agent does not trust; 3 the server
refused the agent's credentials.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import logging
import os
import re
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from xaclab_contracts.suites import load_suite

from xaclab_agent.client import AgentClient
from xaclab_agent.config import Config, load_config, secret_from_env
from xaclab_agent.daemon import Daemon
from xaclab_agent.doctor import doctor_exit_status, run_doctor
from xaclab_agent.errors import (
    AgentError,
    AuthenticationError,
    BuildError,
    ConfigError,
    ResultError,
    SuiteError,
    UnavailableError,
    UntrustedServerError,
)
from xaclab_agent.factors import FACTORS
from xaclab_agent.fingerprint import collect_fingerprint
from xaclab_agent.hygiene import HygieneError
from xaclab_agent.jobrun import JobHooks, execute_job, recover
from xaclab_agent.localview import LocalView
from xaclab_agent.state import Registration, load_registration, save_registration
from xaclab_agent.writecache import WriteCacheError

MACHINE_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
log = logging.getLogger("xaclab_agent")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="xaclab-agent", description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, help="TOML config (default /etc/xaclab/agent.toml)")
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING"])
    sub = parser.add_subparsers(dest="command", required=True)

    reg = sub.add_parser("register", help="register this machine and store its agent token")
    reg.add_argument("--server", help="server base URL, e.g. http://127.0.0.1:8000")
    reg.add_argument("--name", help="machine name, [A-Za-z0-9._-]{1,64} (default: host name)")
    reg.add_argument(
        "--registration-token-file",
        type=Path,
        help="file holding the registration token "
        "(else $XACLAB_REGISTRATION_TOKEN, or the file $XACLAB_REGISTRATION_TOKEN_FILE names)",
    )

    run = sub.add_parser("run", help="claim and run jobs until stopped")
    run.add_argument("--server", help="override the server registered with")
    run.add_argument("--once", action="store_true", help="one claim (at most one job), then exit")
    run.add_argument("--wait", type=int, dest="claim_wait", help="long-poll seconds, 0-60")

    bench = sub.add_parser("bench", help="run a suite locally, results as JSON lines on stdout")
    bench.add_argument("--suite", required=True)
    bench.add_argument("--profile", default="quick")
    bench.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")

    bench.add_argument(
        "--plain", action="store_true", help="plain progress lines instead of progress bars"
    )

    fp = sub.add_parser("fingerprint", help="print this machine's fingerprint as JSON")
    doctor = sub.add_parser("doctor", help="check this machine and say what is wrong")
    doctor.add_argument("--offline", action="store_true", help="skip the server check")
    for p in (run, bench, fp, doctor):
        p.add_argument("--bin-dir", type=Path, help="directory of the libxac programs")
    for p in (run, bench):
        p.add_argument("--work-dir", type=Path, help="parent of the jobs' working directories")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        config = load_config(args.config).with_overrides(
            bin_dir=getattr(args, "bin_dir", None),
            work_dir=getattr(args, "work_dir", None),
            server=getattr(args, "server", None),
            name=getattr(args, "name", None),
            claim_wait=getattr(args, "claim_wait", None),
        )
        handler = {
            "register": _register,
            "run": _run,
            "bench": _bench,
            "fingerprint": _fingerprint,
            "doctor": _doctor,
        }[args.command]
        return handler(config, args)
    except AuthenticationError as exc:
        log.error("%s", exc)
        return 3
    except (
        ConfigError,
        SuiteError,
        BuildError,
        WriteCacheError,
        HygieneError,
        UntrustedServerError,
    ) as exc:
        log.error("%s", exc)
        return 2
    except (UnavailableError, AgentError) as exc:
        log.error("%s", exc)
        return 1


def _register(config: Config, args: argparse.Namespace) -> int:
    if not config.server:
        raise ConfigError("no server: give --server or set XACLAB_AGENT_SERVER")
    name = config.machine_name
    if not MACHINE_NAME.fullmatch(name):
        raise ConfigError(f"machine name {name!r} must be 1-64 characters of [A-Za-z0-9._-]")
    token = _registration_token(args.registration_token_file)
    fingerprint = collect_fingerprint(config.bin_dir, config.work_dir)
    with AgentClient(config.server, ca_file=config.ca_file) as client:
        reply = client.register(registration_token=token, name=name, fingerprint=fingerprint)
    save_registration(
        config.state_dir,
        Registration(config.server, name, reply.machine_id, reply.agent_token),
    )
    log.info(
        "registered %r as machine %d; token stored in %s", name, reply.machine_id, config.state_dir
    )
    return 0


def _registration_token(path: Path | None) -> str:
    if path is not None:
        try:
            token = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"cannot read registration token file: {exc}") from exc
    else:
        token = (secret_from_env("XACLAB_REGISTRATION_TOKEN") or "").strip()
    if not token:
        raise ConfigError(
            "no registration token: give --registration-token-file or set "
            "XACLAB_REGISTRATION_TOKEN (or XACLAB_REGISTRATION_TOKEN_FILE)"
        )
    return token


def _run(config: Config, args: argparse.Namespace) -> int:
    registration = load_registration(config.state_dir)
    server = config.server or registration.server
    lock = _lock(config.state_dir)
    try:
        fingerprint = collect_fingerprint(config.bin_dir, config.work_dir)
        with AgentClient(server, registration.agent_token, ca_file=config.ca_file) as client:
            daemon = Daemon(config, client, fingerprint=fingerprint)
            signal.signal(signal.SIGTERM, daemon.request_stop)
            signal.signal(signal.SIGINT, daemon.request_stop)
            log.info(
                "agent %r serving %s (bin %s, work %s)",
                registration.name,
                server,
                config.bin_dir,
                config.work_dir,
            )
            return daemon.run(once=args.once)
    finally:
        os.close(lock)


def _lock(state_dir: Path) -> int:
    """One daemon per state dir: two would send each other's spool entries."""
    state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(state_dir / "agent.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise ConfigError(f"another xaclab-agent is running with state dir {state_dir}") from None
    return fd


def _bench(config: Config, args: argparse.Namespace) -> int:
    suite = load_suite(args.suite, config.suites_dir)
    factor_pairs = [p for p in args.param if p.partition("=")[0] in FACTORS]
    params = suite.parse_cli_params([p for p in args.param if p not in factor_pairs])
    params.update(_parse_factors(factor_pairs))
    lock = _lock(config.state_dir)  # the write-cache journal is per state dir
    try:
        recover(config)
        fingerprint = collect_fingerprint(config.bin_dir, config.work_dir)
        results: list[dict[str, Any]] = []
        with LocalView(suite.name, plain=args.plain) as view:
            outcome = execute_job(
                config,
                suite_name=suite.name,
                profile=args.profile,
                params=params,
                fingerprint=fingerprint,
                hooks=JobHooks(
                    on_progress=view.progress,
                    on_result=results.append,
                    on_diagnostic=view.diagnostic,
                ),
            )
    finally:
        os.close(lock)
    for result in results:
        sys.stdout.write(json.dumps(result, separators=(",", ":")) + "\n")
    sys.stdout.flush()
    if not outcome.succeeded:
        raise ResultError(f"{suite.name} failed: {outcome.message}")
    log.info("%s: %s", suite.name, outcome.message)
    return 0


def _parse_factors(pairs: list[str]) -> dict[str, Any]:
    """Agent-level factors from ``name=value`` text; split_factors checks them."""
    out: dict[str, Any] = {}
    for pair in pairs:
        name, _, text = pair.partition("=")
        value: Any = text
        if name in ("pin_cpu", "timeout"):
            try:
                value = int(text) if name == "pin_cpu" else float(text)
            except ValueError:
                value = text
        elif name == "drop_caches":
            value = {"true": True, "1": True, "false": False, "0": False}.get(text.lower(), text)
        out[name] = value
    return out


def _fingerprint(config: Config, args: argparse.Namespace) -> int:
    fingerprint = collect_fingerprint(config.bin_dir, config.work_dir)
    sys.stdout.write(json.dumps(fingerprint, indent=2) + "\n")
    return 0


def _doctor(config: Config, args: argparse.Namespace) -> int:
    findings = run_doctor(config, check_server_too=not args.offline)
    for finding in findings:
        sys.stdout.write(f"{'ok     ' if finding.ok else 'PROBLEM'}  {finding.text}\n")
    return doctor_exit_status(findings)


if __name__ == "__main__":
    sys.exit(main())
