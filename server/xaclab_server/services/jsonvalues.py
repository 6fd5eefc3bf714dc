"""Checks on decoded JSON that the databases need but JSON Schema cannot express.

Python's JSON decoder accepts NaN and Infinity, and PostgreSQL refuses them
(and NUL characters) in jsonb, so such values are refused at the door with a
422 instead of failing later with a 500.
"""

import math
from typing import Any


def find_unstorable(value: Any, path: str = "") -> str | None:
    """The path of the first non-finite number or NUL character in ``value``, or None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else (path or "(value)")
    if isinstance(value, str):
        return path or "(value)" if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            if "\x00" in key:
                return f"{path}/{key!r}"
            found = find_unstorable(item, f"{path}/{key}")
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = find_unstorable(item, f"{path}/{index}")
            if found is not None:
                return found
    return None
