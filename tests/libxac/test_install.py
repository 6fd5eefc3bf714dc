"""libxac as a library: programs linked against the build tree and against
an installed copy (``make -C libxac install``) start and run.

The program is the thesis's Figure 2-1, unchanged: it increments the first
integer of ``input.db`` in one transaction, so two runs leave 2 there.
Each program is checked to load ``libxac.so.0`` from the place it was
linked against; a link that silently fell back to ``libxac.a`` would prove
nothing about the shared library.
"""

from __future__ import annotations

import os
import shlex
import struct
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]
LIBXAC = TOP / "libxac"
FIG2_1 = LIBXAC / "examples" / "fig2_1_increment.c"
VERSION = (LIBXAC / "VERSION").read_text().strip()
SONAME = "libxac.so." + VERSION.split(".")[0]
SOFILE = "libxac.so." + VERSION

# Variables a surrounding make or shell may set that would change where
# install puts things or how the nested make runs.
_MAKE_ENV_NOISE = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "PREFIX", "DESTDIR", "LIBDIR", "INCLUDEDIR")


def run(
    argv: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)
    output = done.stdout[-3000:] + done.stderr[-3000:]
    assert done.returncode == 0, f"{shlex.join(argv)}: exit status {done.returncode}\n{output}"
    return done


def make(*args: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in _MAKE_ENV_NOISE}
    run(["make", "-s", "-C", str(LIBXAC), *args], env=env)


def needed_libraries(program: Path) -> list[str]:
    dynamic = run(["readelf", "-d", str(program)]).stdout
    return [line.split("[", 1)[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line]


def loaded_from(program: Path, library: str) -> Path:
    """Where the dynamic loader finds ``library`` for ``program`` (ldd)."""
    for line in run(["ldd", str(program)]).stdout.splitlines():
        name, _, rest = line.strip().partition(" => ")
        if name == library:
            return Path(rest.split(" (")[0])
    raise AssertionError(f"{program} does not load {library}")


def run_twice_and_read_counter(program: Path, workdir: Path) -> int:
    workdir.mkdir()
    for _ in range(2):
        run([str(program)], cwd=workdir)
    with (workdir / "input.db").open("rb") as db:
        return int(struct.unpack("i", db.read(4))[0])


@pytest.fixture(scope="module")
def prefix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A copy installed with PREFIX alone, so its paths are real ones."""
    where = tmp_path_factory.mktemp("libxac-prefix")
    make("install", f"PREFIX={where}")
    yield where


def test_program_linked_against_the_build_tree_starts(tmp_path: Path) -> None:
    make()
    lib = LIBXAC / "lib"
    program = tmp_path / "fig2_1"
    run(
        ["cc", "-std=gnu11", f"-I{LIBXAC / 'include'}", "-include", "xac.h", "-o", str(program), str(FIG2_1)]
        + [f"-L{lib}", "-lxac", f"-Wl,-rpath,{lib}"]
    )
    assert SONAME in needed_libraries(program)
    assert loaded_from(program, SONAME) == lib / SONAME
    assert run_twice_and_read_counter(program, tmp_path / "run") == 2


def test_fig2_1_builds_with_pkg_config_against_an_installed_copy(prefix: Path, tmp_path: Path) -> None:
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    flags = shlex.split(run(["pkg-config", "--cflags", "--libs", "libxac"], env=env).stdout)
    # The prefix is not in the loader's search path: the program records it.
    libdir = run(["pkg-config", "--variable=libdir", "libxac"], env=env).stdout.strip()
    flags.append(f"-Wl,-rpath,{libdir}")
    assert run(["pkg-config", "--modversion", "libxac"], env=env).stdout.strip() == VERSION
    program = tmp_path / "fig2_1"
    run(["cc", "-std=gnu11", "-include", "xac.h", "-o", str(program), str(FIG2_1), *flags])
    assert SONAME in needed_libraries(program)
    assert loaded_from(program, SONAME) == prefix / "lib" / SONAME
    assert run_twice_and_read_counter(program, tmp_path / "run") == 2


def test_a_static_program_links_with_pkg_config_static(prefix: Path, tmp_path: Path) -> None:
    """The installed libxac.a and ``pkg-config --static`` make a fully static program."""
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    flags = shlex.split(run(["pkg-config", "--static", "--cflags", "--libs", "libxac"], env=env).stdout)
    program = tmp_path / "fig2_1_static"
    run(["cc", "-std=gnu11", "-static", "-include", "xac.h", "-o", str(program), str(FIG2_1), *flags])
    assert needed_libraries(program) == []
    assert run_twice_and_read_counter(program, tmp_path / "run") == 2


def test_install_layout_under_destdir_and_uninstall(tmp_path: Path) -> None:
    destdir = tmp_path / "stage"
    make("install", f"DESTDIR={destdir}", "PREFIX=/usr/local")
    root = destdir / "usr" / "local"
    lib = root / "lib"
    programs = sorted(p.stem for p in (LIBXAC / "bench").glob("*.c"))
    suites = sorted(p.name for p in (LIBXAC / "suites").glob("*.json"))
    installed = sorted(str(p.relative_to(root)) for p in root.rglob("*") if not p.is_dir())
    assert installed == sorted(
        ["include/xac.h", "lib/libxac.a", f"lib/{SOFILE}", f"lib/{SONAME}", "lib/libxac.so"]
        + ["lib/pkgconfig/libxac.pc", "lib/xaclab/VERSION", "lib/xaclab/GIT_REVISION", "lib/xaclab/COMPILER"]
        + [f"lib/xaclab/bin/{p}" for p in programs]
        + [f"lib/xaclab/suites/{s}" for s in suites]
    )
    # Relative links, so the staged tree can be copied anywhere.
    assert os.readlink(lib / SONAME) == SOFILE
    assert os.readlink(lib / "libxac.so") == SOFILE
    assert f"Library soname: [{SONAME}]" in run(["readelf", "-d", str(lib / SOFILE)]).stdout
    assert all(os.access(root / "lib" / "xaclab" / "bin" / p, os.X_OK) for p in programs)
    assert (lib / "xaclab" / "VERSION").read_text().strip() == VERSION
    # The .pc names the final prefix, never the staging directory.
    pc = (lib / "pkgconfig" / "libxac.pc").read_text()
    assert "prefix=/usr/local\n" in pc and str(destdir) not in pc
    assert f"Version: {VERSION}\n" in pc
    # What libxac.a needs besides libc on a glibc older than 2.34 (on newer
    # ones libpthread and librt are part of libc, so no link can tell).
    assert "Libs.private: -lpthread -lm -lrt\n" in pc

    make("uninstall", f"DESTDIR={destdir}", "PREFIX=/usr/local")
    assert [p for p in destdir.rglob("*") if not p.is_dir()] == []
    assert not (lib / "xaclab").exists()
