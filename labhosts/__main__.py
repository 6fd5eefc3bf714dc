"""``python -m labhosts``: build the cached root filesystem, boot hosts, tear them down.

    python -m labhosts build                  # debootstrap the cached rootfs and wheelhouse
    python -m labhosts up N --state DIR       # boot N hosts, print their names and addresses
    python -m labhosts ssh NAME --state DIR -- CMD
    python -m labhosts down --state DIR       # stop them and remove everything they used

Run as root.  The hosts keep running after ``up`` returns, until ``down``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from labhosts.lab import Lab, LabError
from labhosts.rootfs import build_rootfs, build_wheelhouse

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="labhosts", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build", help="make the cached root filesystem and wheelhouse")
    up = sub.add_parser("up", help="boot N hosts")
    up.add_argument("count", type=int)
    up.add_argument("--state", type=Path, required=True, help="directory for the lab's state")
    up.add_argument("--subnet", default="10.213.0", help="first three octets of a free /24")
    ssh = sub.add_parser("ssh", help="run a command on a host")
    ssh.add_argument("name")
    ssh.add_argument("--state", type=Path, required=True)
    ssh.add_argument("cmd", nargs=argparse.REMAINDER)
    down = sub.add_parser("down", help="stop the hosts and remove what they used")
    down.add_argument("--state", type=Path, required=True)
    args = parser.parse_args(argv)

    try:
        if args.command == "build":
            sys.stdout.write(f"{build_rootfs()}\n{build_wheelhouse(REPO)}\n")
        elif args.command == "up":
            wheels = build_wheelhouse(REPO)
            lab = Lab(args.state, subnet=args.subnet, binds={str(wheels): "/opt/xaclab-wheels"})
            for host in lab.up(args.count):
                sys.stdout.write(f"{host.name} {host.address}\n")
            sys.stdout.write(f"ssh -i {lab.key} root@<address>\n")
        elif args.command == "ssh":
            lab = Lab(args.state)
            host = next(h for h in lab.hosts if h.name == args.name)
            proc = lab.ssh(host, " ".join(args.cmd).lstrip("- "), check=False, timeout=3600)
            sys.stdout.write(proc.stdout)
            sys.stderr.write(proc.stderr)
            return proc.returncode
        else:
            Lab(args.state).down()
    except LabError as exc:
        sys.stderr.write(f"labhosts: {exc}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
