"""Booted Debian 12 hosts for testing the playbooks, without Docker.

A lab host is a Debian 12 root filesystem made once with debootstrap and
cached under ``/var/cache/xaclab-labhosts``, booted with ``systemd-nspawn
--boot`` on a throwaway overlay (so every run starts clean) inside a network
namespace of its own.  The namespaces hang off one bridge in the host's
namespace with private addresses (default 10.213.0.0/24); the controller
reaches each host over SSH with a key made for the run.

Everything the playbooks install is pre-installed into the cached root
filesystem (``debootstrap --include``), and Python wheels for the agent and
the server are collected once into a wheelhouse that is bind-mounted read-only
into every host, so the hosts need no network beyond the bridge.

Public API: :func:`build_rootfs`, :func:`build_wheelhouse`, :class:`Lab`
(``up``/``down``), and the ``python -m labhosts`` command line.
"""

from labhosts.lab import Host, Lab, LabError
from labhosts.rootfs import build_rootfs, build_wheelhouse

__all__ = ["Host", "Lab", "LabError", "build_rootfs", "build_wheelhouse"]
