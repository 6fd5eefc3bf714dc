"""Installed (not editable), the package carries the contract files inside itself.

The Ansible roles and the server image pip-install contracts/ from a copy of
its source; this builds the same package layout with setuptools (no index
needed) and reads every file through it from another process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

CONTRACTS = Path(__file__).resolve().parents[1]
PROBE = """
import json, sys
from xaclab_contracts import files, fingerprint, results, roles, suites
print(json.dumps({
    "module": files.__file__,
    "dir": str(files.CONTRACTS_DIR),
    "suites": sorted(suites.load_suites()),
    "schema": results.default_validator().max_samples,
    "identity": len(fingerprint.IDENTITY_FIELDS),
    "thesis": files.THESIS_FIGURES.is_file(),
    "tree": roles.shipped_roles().role("search-tree", "tree"),
}))
"""


def test_a_built_package_reads_its_own_data(tmp_path: Path) -> None:
    source, build_lib = tmp_path / "contracts", tmp_path / "lib"
    shutil.copytree(
        CONTRACTS, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    )
    built = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from setuptools import setup; sys.argv[1:] = "
            f"['-q', 'build_py', '--build-lib', {str(build_lib)!r}]; setup()",
        ],
        cwd=source,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    assert "deprecated" not in built.stderr, built.stderr[-3000:]
    probe = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(build_lib)),
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(probe.stdout)
    data = build_lib / "xaclab_contracts" / "data"
    assert Path(found["module"]).is_relative_to(build_lib)
    assert found["dir"] == str(data)
    assert found["suites"] == sorted(p.stem for p in (CONTRACTS / "suites").glob("*.json"))
    assert found["schema"] == 1_000_000 and found["identity"] > 0 and found["thesis"]
    assert found["tree"] == "system"
    shipped = sorted(p.relative_to(data).as_posix() for p in data.rglob("*.json"))
    written = sorted(
        p.relative_to(CONTRACTS).as_posix()
        for p in [*CONTRACTS.glob("*.json"), *(CONTRACTS / "suites").glob("*.json")]
    )
    assert shipped == written
