"""Add up the pass/fail counts of every step of scripts/test.sh.

Reads the step logs in the given directory: the C harness and the smoke
script end with "N passed, N failed"; pytest ends with "N passed, N failed,
... in Xs" (any part may be missing).  Prints one closing line and exits
non-zero when anything failed, including a step that failed without
counting (a lint error, a build error).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

COUNT = re.compile(r"(\d+) (passed|failed|error|errors)\b")


def last_counts(log: str) -> tuple[int, int]:
    for line in reversed(log.splitlines()):
        found = COUNT.findall(line)
        if found:
            passed = sum(int(n) for n, word in found if word == "passed")
            failed = sum(int(n) for n, word in found if word != "passed")
            return passed, failed
    return 0, 0


def main(argv: list[str]) -> int:
    work, failed_steps = Path(argv[1]), argv[2:]
    passed = failed = 0
    for log in sorted(work.glob("*.log")):
        p, f = last_counts(log.read_text(errors="replace"))
        passed += p
        failed += f
    for name in failed_steps:
        sys.stdout.write(f"FAILED step: {name} (see .test/{name}.log)\n")
    if failed_steps and failed == 0:
        failed = len(failed_steps)
    sys.stdout.write(f"\nxaclab: {passed} passed, {failed} failed\n")
    return 1 if failed or failed_steps else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
