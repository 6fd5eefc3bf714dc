"""Secrets from the environment, or from the file a ``<NAME>_FILE`` variable names.

Container secrets arrive as files: when ``<NAME>_FILE`` is set, the value is
that file's content without its trailing newlines.  The server's settings,
its ``create-admin`` password and the agent's registration token all load
their secrets this way.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


class SecretFileError(ValueError):
    """A secret's ``_FILE`` variable clashes with the variable itself, or names a bad file."""


def secret_from_env(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The value of the variable ``name``, else the content of the file ``name_FILE`` names.

    None when neither is set (an empty variable counts as unset).  Raises
    SecretFileError when both are set, or when the file cannot be read or
    holds nothing.
    """
    environ = os.environ if environ is None else environ
    path = environ.get(f"{name}_FILE")
    if not path:
        return environ.get(name) or None
    if environ.get(name):
        raise SecretFileError(f"{name} and {name}_FILE are both set; set only one of them")
    try:
        value = Path(path).read_text(encoding="utf-8").rstrip("\r\n")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise SecretFileError(f"{name}_FILE: cannot read {path}: {reason}") from None
    if not value:
        raise SecretFileError(f"{name}_FILE: {path} is empty")
    return value
