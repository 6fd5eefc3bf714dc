"""Finding, for each mapping of the reproduction report, the newest matching result.

A result matches a :class:`~.thesis_figures.Mapping` when its suite,
benchmark, sut and metric are the mapping's and its params (its job's params
count too, as in comparisons) include every listed param with an equal
value; other params may differ.  Only the newest :data:`SCAN_LIMIT` results
of each suite, benchmark, sut and metric are looked at.  A mapping without
a match gets a sentence: no such result (and the suite to run), or the
closest result's run and the params that differ.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from xaclab_server.models import Job, Result
from xaclab_server.services.thesis_figures import Mapping, ParamValue

# Bounds the work on a machine with a long history; a mapping matched by none of these
# newest results is "not measured yet".
SCAN_LIMIT = 5000
NOT_MEASURED = "not measured yet"


@dataclass(frozen=True, slots=True)
class Found:
    """The summary of one stored result, with its params and its job's."""

    result_id: int
    run_id: int
    created_at: datetime
    unit: str
    n: int
    stats: dict[str, float | None]
    params: dict[str, Any]


def find_latest(
    *, session: Session, machine_id: int, mappings: Iterable[Mapping]
) -> tuple[dict[Mapping, Found], dict[Mapping, str]]:
    """The newest matching result of each mapping, and a sentence for each one without."""
    groups: dict[tuple[str, str, str, str], list[Mapping]] = {}
    for mapping in mappings:
        group = groups.setdefault(
            (mapping.suite, mapping.benchmark, mapping.sut, mapping.metric), []
        )
        if mapping not in group:
            group.append(mapping)
    found: dict[Mapping, Found] = {}
    why: dict[Mapping, str] = {}
    for (suite, benchmark, sut, metric), group in groups.items():
        candidates = _candidates(session, machine_id, suite, benchmark, sut, metric)
        for mapping in group:
            hit = next((c for c in candidates if _matches(c.params, mapping.params)), None)
            if hit is not None:
                found[mapping] = hit
            else:
                why[mapping] = _why_missing(mapping, candidates)
    return found, why


def _candidates(
    session: Session, machine_id: int, suite: str, benchmark: str, sut: str, metric: str
) -> list[Found]:
    rows = session.execute(
        select(
            Result.id,
            Result.run_id,
            Result.created_at,
            Result.unit,
            Result.n,
            Result.mean,
            Result.median,
            Result.min,
            Result.max,
            Result.stddev,
            Result.p99,
            Result.params,
            Job.params,
        )
        .join(Job, Job.id == Result.job_id)
        .where(
            Result.machine_id == machine_id,
            Result.suite == suite,
            Result.benchmark == benchmark,
            Result.sut == sut,
            Result.metric == metric,
        )
        .order_by(Result.created_at.desc(), Result.id.desc())
        .limit(SCAN_LIMIT)
    ).all()
    found = []
    for row in rows:
        params = dict(row[11] or {})
        for key, value in (row[12] or {}).items():
            params.setdefault(key, value)
        found.append(
            Found(
                result_id=row[0],
                run_id=row[1],
                created_at=row[2],
                unit=row[3],
                n=row[4],
                stats={
                    "mean": row[5],
                    "median": row[6],
                    "min": row[7],
                    "max": row[8],
                    "stddev": row[9],
                    "p99": row[10],
                },
                params=params,
            )
        )
    return found


def _matches(params: dict[str, Any], wanted: tuple[tuple[str, ParamValue], ...]) -> bool:
    return all(key in params and same_value(params[key], value) for key, value in wanted)


def same_value(a: Any, b: Any) -> bool:
    """Param equality as JSON means it: true is not 1, but 1024 is 1024.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if is_number(a) and is_number(b):
        return float(a) == float(b)
    return bool(a == b)


def _why_missing(mapping: Mapping, candidates: list[Found]) -> str:
    wanted = ", ".join(f"{k}={_show(v)}" for k, v in mapping.params)
    if not candidates:
        return (
            f"{NOT_MEASURED}: this machine has no {mapping.metric} result of "
            f"{mapping.suite} / {mapping.benchmark} ({mapping.sut})"
            + (f" with {wanted}" if wanted else "")
            + f"; run the {mapping.suite} suite"
        )

    def differences(candidate: Found) -> list[str]:
        return [
            f"{key}={_show(candidate.params[key]) if key in candidate.params else '(unset)'}"
            f" (wanted {_show(value)})"
            for key, value in mapping.params
            if not (key in candidate.params and same_value(candidate.params[key], value))
        ]

    closest = min(candidates, key=lambda c: len(differences(c)))
    return (
        f"{NOT_MEASURED} with {wanted}: the closest result (run {closest.run_id}) has "
        + ", ".join(differences(closest))
    )


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
