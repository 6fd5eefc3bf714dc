"""``xaclab-agent doctor`` checks each system's programs against the Debian packages its
declaration names: the real programs load their libraries; a program whose library is
gone is named with the packages to install."""

from __future__ import annotations

import subprocess
from pathlib import Path

from xaclab_agent.config import Config
from xaclab_agent.doctor import check_libraries

BIN_DIR = Path(__file__).resolve().parents[2] / "libxac" / "bin"


def test_every_declared_system_with_packages_finds_its_libraries(tmp_path: Path) -> None:
    assert (BIN_DIR / "sqlite_insert").is_file(), "build libxac first"
    config = Config(state_dir=tmp_path, bin_dir=BIN_DIR, work_dir=tmp_path)
    findings = check_libraries(config)
    assert all(f.ok for f in findings), [f.text for f in findings if not f.ok]
    titles = {f.text.split(":")[0] for f in findings}
    # Taken from the suites' declarations, not from a list in the agent.
    assert {"Berkeley DB", "LMDB", "SQLite", "PMDK libpmemobj", "RocksDB"} <= titles
    assert "LIBXAC" not in titles  # no Debian package: nothing to find


def test_a_program_whose_library_is_gone_is_a_problem_naming_the_packages(
    tmp_path: Path,
) -> None:
    # A real program linked against a real shared library that is then removed.
    lib = tmp_path / "libgone.so"
    (tmp_path / "gone.c").write_text("int gone(void) { return 1; }\n")
    (tmp_path / "main.c").write_text("int gone(void);\nint main(void) { return gone(); }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib), str(tmp_path / "gone.c")], check=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    subprocess.run(
        [
            "cc",
            "-o",
            str(bin_dir / "sqlite_insert"),
            str(tmp_path / "main.c"),
            f"-L{tmp_path}",
            "-lgone",
        ],
        check=True,
    )
    lib.unlink()
    config = Config(state_dir=tmp_path, bin_dir=bin_dir, work_dir=tmp_path)
    findings = check_libraries(config)
    bad = [f.text for f in findings if not f.ok]
    assert bad == [
        "SQLite: sqlite_insert cannot load libgone.so; install the Debian packages "
        "libsqlite3-dev, sqlite3 (scripts/install-deps.sh does)."
    ]
