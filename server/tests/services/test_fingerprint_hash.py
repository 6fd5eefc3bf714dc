"""The server's comparability hash: identity fields only, and the agent's algorithm."""

import hashlib
import json
from typing import Any

from xaclab_contracts.fingerprint import HARDWARE_FIELDS, IDENTITY_FIELDS, fingerprint_hash

FINGERPRINT: dict[str, Any] = {
    "fingerprint_version": 2,
    "hostname": "lab-01",
    "arch": "x86_64",
    "cpu": {"model": "Xeon E5", "cores": 2, "logical_cpus": 4, "governor": "performance"},
    "memory": {"total_gib": 24},
    "kernel": {"release": "6.1.0-18-amd64"},
    "os": {"id": "debian", "version_id": "12"},
    "libxac": {"version": "0.1.0", "git": "abc"},
    "storage": {
        "directory": "/var/lib/xaclab/work",
        "fstype": "ext4",
        "mount_options": "rw,relatime",
        "disk_models": ["Samsung SSD 870"],
        "rotational": [False],
        "schedulers": ["mq-deadline"],
        "write_cache": {"kernel": "write back"},
    },
}


def with_value(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    changed: dict[str, Any] = json.loads(json.dumps(FINGERPRINT))
    target = changed
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return changed


def test_hash_ignores_name_build_write_cache_and_directory() -> None:
    base = fingerprint_hash(FINGERPRINT)
    assert fingerprint_hash(with_value(("hostname",), "renamed")) == base
    assert fingerprint_hash(with_value(("libxac", "git"), "def")) == base
    write_through = with_value(("storage", "write_cache"), {"kernel": "write through"})
    assert fingerprint_hash(write_through) == base
    assert fingerprint_hash(with_value(("storage", "directory"), "/srv/other")) == base


def test_every_identity_field_changes_the_hash() -> None:
    base = fingerprint_hash(FINGERPRINT)
    for path in IDENTITY_FIELDS:
        assert fingerprint_hash(with_value(path, "something else")) != base, path


def test_hardware_fields_are_identity_fields() -> None:
    # Machines that are comparable at all must share at least their hardware.
    assert set(HARDWARE_FIELDS) <= set(IDENTITY_FIELDS)
    assert ("cpu", "model") in HARDWARE_FIELDS and ("storage", "disk_models") in HARDWARE_FIELDS


def test_hash_is_sha256_of_the_picked_fields() -> None:
    # The agent computes the same bytes; tests/e2e checks the two agree on a real machine.
    picked: dict[str, Any] = {}
    for path in IDENTITY_FIELDS:
        section: Any = FINGERPRINT[path[0]]
        picked[".".join(path)] = section if len(path) == 1 else section[path[1]]
    canonical = json.dumps(picked, sort_keys=True, separators=(",", ":"))
    expected = "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
    assert fingerprint_hash(FINGERPRINT) == expected


def test_missing_sections_hash_as_nulls_not_errors() -> None:
    assert fingerprint_hash({}) == fingerprint_hash({"cpu": "not an object"})
