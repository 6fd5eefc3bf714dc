"""Every result a benchmark program writes names the libxac revision it was
built from (``library.git_revision``).  A build tree updated in place, a
checkout moved to another commit and ``make`` run again, must name the new
revision even when the commit left ``bench/common/result.c`` alone, and must
not recompile anything when the revision stays the same.

The object is built into a temporary build folder (``BUILD=``), so the
tree's own build is untouched.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
LIBXAC = TOP / "libxac"
_MAKE_ENV_NOISE = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "GITREV")


def build_result_object(build: Path, revision: str) -> Path:
    env = {k: v for k, v in os.environ.items() if k not in _MAKE_ENV_NOISE}
    target = build / "bench" / "common" / "result.o"
    done = subprocess.run(
        ["make", "-s", "-C", str(LIBXAC), f"BUILD={build}", f"GITREV={revision}", str(target)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return target


def names(obj: Path, revision: str) -> bool:
    return f'"git_revision":"{revision}"'.encode() in obj.read_bytes()


def test_a_new_revision_rebuilds_what_names_it_and_nothing_else(tmp_path: Path) -> None:
    build = tmp_path / "build"
    first = build_result_object(build, "aaaaaaaaaaaa")
    assert names(first, "aaaaaaaaaaaa")

    second = build_result_object(build, "bbbbbbbbbbbb")
    assert names(second, "bbbbbbbbbbbb"), "a new revision left the old one in the results"
    assert not names(second, "aaaaaaaaaaaa")

    built_at = second.stat().st_mtime_ns
    again = build_result_object(build, "bbbbbbbbbbbb")
    assert again.stat().st_mtime_ns == built_at, "the same revision rebuilt the object"
    assert (build / "git-revision").read_text().strip() == "bbbbbbbbbbbb"
