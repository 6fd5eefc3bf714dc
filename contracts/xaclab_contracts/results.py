"""Result validation against contracts/result-format.schema.json (docs/result-format.md).

:func:`check_result` is everything one result must pass, in the order the
server checks an upload: ``samples`` or ``histogram`` (one of them), the
schema, no non-finite number or NUL character (PostgreSQL refuses them in
jsonb), and a consistent histogram.  The agent runs it on every line a
program prints; the server runs the same steps, with a numpy fast path for
the samples (:class:`ResultValidator`'s ``light`` schema leaves them out).
A refusal is a :class:`ResultFormatError` that names the place.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import best_match

from xaclab_contracts import histogram as hist
from xaclab_contracts.files import RESULT_SCHEMA
from xaclab_contracts.histogram import CheckedHistogram, HistogramError
from xaclab_contracts.suites import Suite

# The only shape of ``samples`` the fast path knows how to check; load_validator
# refuses a schema that says anything else about them.
SAMPLES_KEYWORDS = frozenset({"type", "minItems", "maxItems", "items"})
HISTOGRAM_FLOATS = ("min", "max", "sum", "sum_squares")


class ResultFormatError(ValueError):
    """A result the format refuses: ``where`` is the path, ``unstorable`` says which sentence.

    ``str()`` is the reason alone; callers say which result and where.
    """

    def __init__(self, message: str, where: str, *, unstorable: bool = False) -> None:
        super().__init__(message)
        self.where = where
        self.unstorable = unstorable

    def sentence(self) -> str:
        """'does not follow the result format at P: why' or 'has a non-finite ... at P'."""
        if self.unstorable:
            return f"has a non-finite number or a NUL character at {self.where}"
        return f"does not follow the result format at {self.where}: {self}"


@dataclass(frozen=True, slots=True)
class ResultValidator:
    """The result schema (``full``) and its copy without the per-sample checks (``light``)."""

    full: Draft202012Validator
    light: Draft202012Validator
    min_samples: int
    max_samples: int


def load_validator(schema_path: Path = RESULT_SCHEMA) -> ResultValidator:
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    samples = schema["properties"]["samples"]
    if (
        set(samples) != SAMPLES_KEYWORDS
        or samples["type"] != "array"
        or samples["items"] != {"type": "number"}
    ):
        raise ValueError(
            f"{schema_path}: 'samples' must be an array of numbers with minItems and maxItems "
            "(the upload fast path checks exactly that)"
        )
    _check_histogram_schema(schema_path, schema["properties"]["histogram"])
    light = copy.deepcopy(schema)
    light["properties"]["samples"] = {"type": "array"}
    light["properties"]["histogram"]["properties"]["buckets"] = {"type": "array"}
    return ResultValidator(
        full=Draft202012Validator(schema, format_checker=FormatChecker()),
        light=Draft202012Validator(light, format_checker=FormatChecker()),
        min_samples=int(samples["minItems"]),
        max_samples=int(samples["maxItems"]),
    )


@lru_cache(maxsize=1)
def default_validator() -> ResultValidator:
    return load_validator()


def _check_histogram_schema(schema_path: Path, schema: dict[str, Any]) -> None:
    """The schema's histogram bounds must be the ones :mod:`.histogram` checks."""
    props = schema["properties"]
    buckets = props["buckets"]
    index_rule, count_rule = buckets["items"]["prefixItems"]
    found = (
        props["scheme"]["const"],
        props["count"]["minimum"],
        props["count"]["maximum"],
        buckets["maxItems"],
        index_rule["minimum"],
        index_rule["maximum"],
        count_rule["minimum"],
        count_rule["maximum"],
    )
    expected = (
        hist.SCHEME,
        hist.RAW_MAX + 1,
        hist.MAX_COUNT,
        hist.MAX_BUCKETS,
        hist.INDEX_MIN,
        hist.INDEX_MAX,
        1,
        hist.MAX_COUNT,
    )
    if found != expected:
        raise ValueError(
            f"{schema_path}: the histogram's bounds {found} are not the ones the upload fast "
            f"path checks {expected}"
        )


def check_result(result: Any, validator: ResultValidator | None = None) -> CheckedHistogram | None:
    """Refuse ``result`` with ResultFormatError, or return its checked histogram (if any)."""
    validator = validator or default_validator()
    check_samples_or_histogram(result)
    check_schema(validator.full, result)
    if "histogram" in result:
        return checked_histogram(result)
    bad = find_unstorable(result)
    if bad is not None:
        raise ResultFormatError("", bad, unstorable=True)
    return None


def check_samples_or_histogram(result: Any) -> None:
    """The schema's oneOf, with a sentence instead of jsonschema's dump of the whole result."""
    if not isinstance(result, dict):
        return
    has_samples, has_histogram = "samples" in result, "histogram" in result
    if has_samples and has_histogram:
        raise ResultFormatError(
            "it carries both 'samples' and 'histogram'; a result carries either 'samples' or "
            "(above 100,000 samples) 'histogram'",
            "(top level)",
        )
    if not has_samples and not has_histogram:
        raise ResultFormatError(
            "'samples' is a required property (or, above 100,000 samples, 'histogram')",
            "(top level)",
        )


def check_schema(schema: Draft202012Validator, result: Any) -> None:
    error = best_match(schema.iter_errors(result))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise ResultFormatError(error.message, where)


def checked_histogram(result: Mapping[str, Any]) -> CheckedHistogram:
    """A schema-valid result's histogram: finite, storable and consistent."""
    raw = result["histogram"]
    for key in HISTOGRAM_FLOATS:
        if isinstance(raw[key], int) and not math.isfinite(float_or_inf(raw[key])):
            raise ResultFormatError("an integer too large for a float64", f"histogram/{key}")
        if not math.isfinite(raw[key]):
            raise ResultFormatError("", f"/histogram/{key}", unstorable=True)
    bad = find_unstorable({k: v for k, v in result.items() if k != "histogram"})
    if bad is not None:
        raise ResultFormatError("", bad, unstorable=True)
    try:
        return hist.check_histogram(raw)
    except HistogramError as exc:
        raise ResultFormatError(str(exc), "/".join(["histogram", *exc.where])) from None


def check_system(result: Mapping[str, Any], suite: Suite) -> None:
    """Refuse a result whose ``sut`` no program of ``suite`` declares (a file without ``sut``
    declares none and is not checked)."""
    systems = suite.all_systems
    if systems and result["sut"] not in systems:
        raise ResultFormatError(
            f"system {result['sut']!r} is not one that suite {suite.name!r} declares "
            f"({', '.join(systems)})",
            "sut",
        )


def find_unstorable(value: Any, path: str = "") -> str | None:
    """The path of the first non-finite number or NUL character in ``value``, or None.

    Python's JSON decoder accepts NaN and Infinity, and PostgreSQL refuses them
    (and NUL characters) in jsonb.
    """
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


def float_or_inf(value: int) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf
