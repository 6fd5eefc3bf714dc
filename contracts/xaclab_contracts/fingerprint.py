"""The fingerprint hash (docs/fingerprint.md): which machines' numbers are comparable.

contracts/fingerprint-fields.json names two lists of field paths.  The
``identity_fields`` make :func:`fingerprint_hash`, a SHA-256 over the
canonical JSON of ``{"cpu.model": ..., ...}`` with null for a missing field:
the agent attaches it to every result and the server recomputes it at
registration, from this one function, so the two cannot drift apart.  The
``hardware_fields`` are called out when a comparison across identity
fingerprints is refused or made (docs/validity.md); :func:`identity_differences`
names the fields two fingerprints disagree on, for the refusals and flags that
quote them.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from xaclab_contracts.files import FINGERPRINT_FIELDS

FieldPath = tuple[str, ...]


def _field_lists() -> dict[str, list[list[str]]]:
    loaded: dict[str, list[list[str]]] = json.loads(FINGERPRINT_FIELDS.read_text("utf-8"))
    return loaded


_FIELDS = _field_lists()
IDENTITY_FIELDS: tuple[FieldPath, ...] = tuple(tuple(p) for p in _FIELDS["identity_fields"])
HARDWARE_FIELDS: tuple[FieldPath, ...] = tuple(tuple(p) for p in _FIELDS["hardware_fields"])


def dig(value: Any, path: FieldPath) -> Any:
    """``value[path[0]][path[1]]...``, or None where a level is missing or not an object."""
    for part in path:
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def fingerprint_hash(fingerprint: dict[str, Any]) -> str:
    """SHA-256 over the identity fields only, written ``sha256:<hex>``.

    The host name, the library build, the write-cache state and volatile
    fields are left out, so renaming or rebuilding does not split a
    machine's history, while a different CPU, memory size, kernel, file
    system or disk always does.
    """
    picked = {".".join(path): dig(fingerprint, path) for path in IDENTITY_FIELDS}
    canonical = json.dumps(picked, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def identity_differences(
    a: dict[str, Any], b: dict[str, Any], fields: tuple[FieldPath, ...] = IDENTITY_FIELDS
) -> list[str]:
    """The identity fields in which two fingerprints differ, each as ``path (a against b)``."""
    return [
        f"{'.'.join(path)} ({dig(a, path)!r} against {dig(b, path)!r})"
        for path in fields
        if dig(a, path) != dig(b, path)
    ]
