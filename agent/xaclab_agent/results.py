"""Reading result lines (docs/result-format.md) from a benchmark program's stdout."""

from __future__ import annotations

import json
from typing import Any

from xaclab_contracts.results import ResultFormatError, check_result

from xaclab_agent.errors import ResultError

MAX_LINE_BYTES = 16 * 1024 * 1024
MAX_RESULTS_PER_UPLOAD = 1000
MAX_UPLOAD_BYTES = 32 * 1024 * 1024
MAX_PARAMS = 32


def parse_result_line(line: bytes | str) -> dict[str, Any]:
    """Parse and validate one stdout line; the program must not set ``env`` itself.

    The checks are the server's (:func:`xaclab_contracts.results.check_result`),
    so a bad line is reported here, in the job's log, and the job's other
    results still upload.
    """
    if len(line) > MAX_LINE_BYTES:
        raise ResultError(f"line is longer than {MAX_LINE_BYTES} bytes")
    try:
        value = json.loads(line)
    except ValueError as exc:
        raise ResultError(f"not JSON ({exc}): {_excerpt(line)}") from None
    if not isinstance(value, dict):
        raise ResultError(f"not a JSON object: {_excerpt(line)}")
    if "env" in value:
        raise ResultError("a benchmark program must not set 'env'; the agent adds it")
    try:
        check_result(value)
    except ResultFormatError as exc:
        raise ResultError(f"not a valid version-1 result: it {exc.sentence()[:400]}") from None
    return value


def with_env(result: dict[str, Any], env: dict[str, Any]) -> dict[str, Any]:
    return {**result, "env": env}


def chunk_results(results: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Split into uploads within the server's limits (1,000 results, 32 MiB)."""
    chunks: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    size = 0
    budget = MAX_UPLOAD_BYTES - 64 * 1024  # room for the envelope
    for result in results:
        n = len(json.dumps(result, separators=(",", ":")))
        if current and (len(current) >= MAX_RESULTS_PER_UPLOAD or size + n > budget):
            chunks.append(current)
            current, size = [], 0
        current.append(result)
        size += n + 1
    if current:
        chunks.append(current)
    return chunks


def _excerpt(line: bytes | str) -> str:
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    text = text.strip()
    return repr(text if len(text) <= 120 else text[:117] + "...")
