#!/usr/bin/python3
"""Print the Debian packages the suites' systems need, one a line, each once.

Read from the "systems" declarations of contracts/suites/*.json (docs/suites.md,
"Systems") with the standard library only: install-deps.sh runs it before the
.venv with xaclab_contracts exists.  The contracts tests check that it prints
exactly what xaclab_contracts.suites.debian_packages() says.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SUITES = Path(__file__).resolve().parent.parent / "contracts" / "suites"


def packages(directory: Path) -> list[str]:
    found: set[str] = set()
    for path in sorted(directory.glob("*.json")):
        declaration = json.loads(path.read_text(encoding="utf-8"))
        for system in declaration.get("systems", {}).values():
            found.update(system.get("packages", []))
    return sorted(found)


if __name__ == "__main__":
    sys.stdout.write("".join(f"{p}\n" for p in packages(Path(sys.argv[1]) if len(sys.argv) > 1 else SUITES)))
