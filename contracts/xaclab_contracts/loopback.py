"""Whether a host is this machine's loopback: the one place plain HTTP is fine.

The server refuses to serve plain HTTP anywhere else without an explicit
opt-out, and the agent warns when it talks plain HTTP to anything else.
"""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """``localhost``, or an address in 127.0.0.0/8 or ::1 (brackets allowed)."""
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
