"""The fingerprint hash and secret loading, each written once for the agent and the server."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from xaclab_contracts.files import FINGERPRINT_FIELDS
from xaclab_contracts.fingerprint import HARDWARE_FIELDS, IDENTITY_FIELDS, dig, fingerprint_hash
from xaclab_contracts.secret_env import SecretFileError, secret_from_env


def test_the_field_lists_come_from_the_contract_file() -> None:
    lists = json.loads(FINGERPRINT_FIELDS.read_text())
    assert IDENTITY_FIELDS == tuple(tuple(p) for p in lists["identity_fields"])
    assert set(HARDWARE_FIELDS) <= set(IDENTITY_FIELDS)


def test_the_hash_covers_the_identity_fields_only() -> None:
    fingerprint: dict[str, Any] = {"hostname": "lab-01", "cpu": {"model": "Xeon", "cores": 4}}
    picked = {".".join(p): dig(fingerprint, p) for p in IDENTITY_FIELDS}
    canonical = json.dumps(picked, sort_keys=True, separators=(",", ":")).encode()
    assert fingerprint_hash(fingerprint) == "sha256:" + hashlib.sha256(canonical).hexdigest()
    assert fingerprint_hash({**fingerprint, "hostname": "renamed"}) == fingerprint_hash(fingerprint)
    other_cpu = {**fingerprint, "cpu": {"model": "EPYC", "cores": 4}}
    assert fingerprint_hash(other_cpu) != fingerprint_hash(fingerprint)
    assert dig({"cpu": "not an object"}, ("cpu", "model")) is None


def test_a_secret_comes_from_the_variable_or_its_file(tmp_path: Path) -> None:
    secret = tmp_path / "token"
    secret.write_text("from-a-file\r\n\n")
    assert secret_from_env("X", {"X": "direct"}) == "direct"
    assert secret_from_env("X", {"X_FILE": str(secret)}) == "from-a-file"
    assert secret_from_env("X", {"X": "", "X_FILE": str(secret)}) == "from-a-file"
    assert secret_from_env("X", {"X": "", "X_FILE": ""}) is None
    with pytest.raises(SecretFileError, match="X and X_FILE are both set"):
        secret_from_env("X", {"X": "direct", "X_FILE": str(secret)})
    with pytest.raises(SecretFileError, match="X_FILE: cannot read .*nope: No such file"):
        secret_from_env("X", {"X_FILE": str(tmp_path / "nope")})
    secret.write_text("\n")
    with pytest.raises(SecretFileError, match="is empty"):
        secret_from_env("X", {"X_FILE": str(secret)})
