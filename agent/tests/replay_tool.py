"""Stand-in for hdparm, sdparm and nvme-cli: replays their recorded outputs.

Called as ``replay_tool.py TOOL ARGS...`` (the tests put wrappers named
``hdparm``, ``sdparm`` and ``nvme`` on PATH).  The simulated device lives in
the JSON file ``$STANDIN_STATE``: ``{"state": "on"|"off", "mode": "ok" |
"unsupported" | "no-identity" | "denied" | "denied-no-capability" | "gone",
"gone_after": N}``; with ``gone_after`` the device disappears after N more
calls (a disk pulled mid-run).  Every call is appended to ``calls`` so a test
can see what the agent ran.  The outputs are
recorded/write-cache-tools.json, byte for byte.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

RECORDED = Path(__file__).with_name("recorded") / "write-cache-tools.json"


def parse(tool: str, args: list[str]) -> tuple[str, str, bool | None]:
    """(operation get|set, device, value to set) from the argv the agent's backends use."""
    if tool == "hdparm" and len(args) == 2 and args[0] in ("-W", "-W0", "-W1"):
        return ("get", args[1], None) if args[0] == "-W" else ("set", args[1], args[0] == "-W1")
    if tool == "sdparm" and len(args) == 3 and args[1] == "WCE":
        if args[0] == "--get":
            return "get", args[2], None
        if args[0] in ("--set", "--clear"):
            return "set", args[2], args[0] == "--set"
    if tool == "nvme" and len(args) >= 4 and args[2:4] == ["-f", "6"]:
        if args[0] == "get-feature" and len(args) == 4:
            return "get", args[1], None
        if args[0] == "set-feature" and len(args) == 6 and args[4] == "-v":
            return "set", args[1], args[5] == "1"
    raise SystemExit(f"replay_tool: no recorded output for {tool} {' '.join(args)}")


def case_name(tool: str, operation: str, device: dict[str, Any], value: bool | None) -> str:
    mode = device.get("mode", "ok")
    if mode == "ok":
        wanted = device["state"] if operation == "get" else ("on" if value else "off")
        return f"{operation}-{wanted}"
    if mode in ("unsupported",):
        return f"{operation}-unsupported"
    if mode == "no-identity":
        return "get-no-identity"
    # sdparm and nvme print another line when they open for writing.
    suffix = "-set" if operation == "set" and tool in ("sdparm", "nvme") else ""
    return f"{mode}{suffix}" if mode in ("denied", "gone") else mode


def main(argv: list[str]) -> int:
    tool, args = argv[0], argv[1:]
    state_path = Path(os.environ["STANDIN_STATE"])
    device = json.loads(state_path.read_text())
    device.setdefault("calls", []).append([tool, *args])
    if device.get("gone_after") is not None:
        if device["gone_after"] <= 0:
            device["mode"] = "gone"
        device["gone_after"] -= 1
    operation, path, value = parse(tool, args)
    recorded = json.loads(RECORDED.read_text())[tool]
    name = case_name(tool, operation, device, value)
    case = recorded[name]
    if operation == "set" and name.startswith("set-") and device.get("mode", "ok") == "ok":
        device["state"] = "on" if value else "off"
    state_path.write_text(json.dumps(device))
    sys.stdout.write(case["stdout"].replace("{dev}", path))
    sys.stderr.write(case["stderr"].replace("{dev}", path))
    return int(case["exit"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
