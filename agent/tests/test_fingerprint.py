from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from xaclab_contracts.fingerprint import fingerprint_hash

from xaclab_agent.fingerprint import collect_fingerprint, cpu_info, libxac_info


def test_fingerprint_is_json_and_fits_in_env() -> None:
    fp = collect_fingerprint(None)
    json.dumps(fp)
    assert len(fp) <= 64
    for key in ("hostname", "cpu", "memory", "kernel", "os", "libxac", "fingerprint_hash"):
        assert key in fp
    assert fp["cpu"]["logical_cpus"] >= 1


def test_hash_is_stable_and_ignores_hostname_and_library() -> None:
    fp: dict[str, Any] = collect_fingerprint(None)
    again = collect_fingerprint(None)
    assert fp["fingerprint_hash"] == again["fingerprint_hash"]
    renamed = dict(fp, hostname="other", libxac={"version": "9", "git_revision": "x"})
    assert fingerprint_hash(renamed) == fp["fingerprint_hash"]
    other_cpu = dict(fp, cpu=dict(fp["cpu"], model="Other CPU"))
    assert fingerprint_hash(other_cpu) != fp["fingerprint_hash"]


def test_cpuinfo_counts_physical_cores(tmp_path: Path) -> None:
    text = ""
    for cpu, core in [(0, 0), (1, 0), (2, 1), (3, 1)]:
        text += (
            f"processor\t: {cpu}\nmodel name\t: Test CPU\nphysical id\t: 0\ncore id\t: {core}\n\n"
        )
    (tmp_path / "cpuinfo").write_text(text)
    info = cpu_info(tmp_path / "cpuinfo")
    assert info["model"] == "Test CPU" and info["cores"] == 2


def test_libxac_version_from_installed_layout(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "VERSION").write_text("1.2.3\n")
    (tmp_path / "GIT_REVISION").write_text("deadbeef\n")
    (tmp_path / "COMPILER").write_text("gcc 12.2.0\n")
    assert libxac_info(tmp_path / "bin") == {
        "version": "1.2.3",
        "git_revision": "deadbeef",
        "compiler": "gcc 12.2.0",
    }
    assert libxac_info(tmp_path / "nowhere" / "bin")["version"] == "unknown"


def test_hash_separates_disks_and_ignores_volatile_fields(tmp_path: Path) -> None:
    fp: dict[str, Any] = collect_fingerprint(None, tmp_path)
    assert fp["storage"]["fstype"] and fp["storage"]["directory"] == str(tmp_path)
    other_disk = dict(fp, storage=dict(fp["storage"], disk_models=["nvme:Other SSD"]))
    assert fingerprint_hash(other_disk) != fp["fingerprint_hash"]
    spinning = dict(
        fp,
        storage=dict(
            fp["storage"], rotational=[not r for r in fp["storage"]["rotational"]] or [True]
        ),
    )
    assert fingerprint_hash(spinning) != fp["fingerprint_hash"]
    busy = dict(fp, hygiene={"before": {"loadavg_1m": 9.0}}, memory=dict(fp["memory"], free=1))
    assert fingerprint_hash(busy) == fp["fingerprint_hash"]
