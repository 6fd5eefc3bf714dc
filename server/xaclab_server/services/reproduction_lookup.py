"""Finding, for each mapping of the reproduction report, the newest matching result.

A result matches a :class:`~.thesis_figures.Mapping` when its suite,
benchmark, sut and metric are the mapping's and its params (its job's params
count too, as in comparisons) include every listed param with an equal
value; other params may differ.  Only the newest :data:`SCAN_LIMIT` results
of each suite, benchmark, sut and metric are looked at.  A mapping without
a match gets a sentence: no such result (and the suite to run), or the
closest result's run and the params that differ.

Only results of the machine's current epoch count (docs/validity.md): an older
epoch had another identity fingerprint.  A result's ``write_cache`` param is
matched with its scope (:func:`xaclab_contracts.validity.write_cache_setting`):
a mapping that asks for ``write_cache=off`` (the thesis disabled the drives'
caches) is never filled by ``kernel-off``, a change of the kernel's view
alone; such a result is found separately (``kernel_only``) so the report can
show it under its own label.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from xaclab_server.models import Job, Result
from xaclab_server.services.comparisons import merge_params
from xaclab_server.services.thesis_figures import Mapping, ParamValue

# Bounds the work on a machine with a long history; a mapping matched by none of these
# newest results is "not measured yet".
SCAN_LIMIT = 5000
NOT_MEASURED = "not measured yet"
CANNOT_MEASURE = "cannot be measured on this machine"


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
    flags: dict[str, str] | None  # None: stored before validity flags existed
    median_ci: tuple[float, float] | None = None  # the 95% interval of the median


@dataclass(slots=True)
class Lookup:
    found: dict[Mapping, Found]
    why: dict[Mapping, str]
    # For a mapping asking for the device's write cache on or off: the newest result that
    # changed only the kernel's view instead.
    kernel_only: dict[Mapping, Found]
    # Why such a mapping cannot have a value on this machine: the agent changed only the
    # kernel's view because the device takes no write-cache command (issue J).
    unavailable: dict[Mapping, str] = field(default_factory=dict)


def find_latest(
    *, session: Session, machine_id: int, epoch: int, mappings: Iterable[Mapping]
) -> Lookup:
    """The newest matching result of each mapping in ``epoch``, and a sentence for each one
    without."""
    groups: dict[tuple[str, str, str, str], list[Mapping]] = {}
    for mapping in mappings:
        group = groups.setdefault(
            (mapping.suite, mapping.benchmark, mapping.sut, mapping.metric), []
        )
        if mapping not in group:
            group.append(mapping)
    lookup = Lookup({}, {}, {})
    for (suite, benchmark, sut, metric), group in groups.items():
        candidates = _candidates(session, machine_id, epoch, (suite, benchmark, sut, metric))
        for mapping in group:
            hit = next((c for c in candidates if _matches(c.params, mapping.params)), None)
            if hit is not None:
                lookup.found[mapping] = hit
                continue
            lookup.why[mapping] = _why_missing(mapping, candidates)
            kernel = _kernel_only(mapping.params)
            if kernel is not None:
                other = next((c for c in candidates if _matches(c.params, kernel)), None)
                if other is not None:
                    lookup.kernel_only[mapping] = other
    caches = _write_caches(session, {f.result_id for f in lookup.kernel_only.values()})
    for mapping, other in lookup.kernel_only.items():
        lookup.unavailable[mapping] = _cannot_switch(
            other, caches.get(other.result_id, {}), dict(mapping.params)["write_cache"]
        )
    return lookup


def _kernel_only(
    wanted: tuple[tuple[str, ParamValue], ...],
) -> tuple[tuple[str, ParamValue], ...] | None:
    """The params with write_cache on/off replaced by its kernel-only twin, if it has one."""
    asked = dict(wanted).get("write_cache")
    if asked not in ("on", "off"):
        return None
    return tuple((k, f"kernel-{v}" if k == "write_cache" else v) for k, v in wanted)


def _write_caches(session: Session, result_ids: set[int]) -> dict[int, dict[str, Any]]:
    """The ``env.write_cache`` of each of these results, read in one query."""
    if not result_ids:
        return {}
    rows = session.execute(select(Result.id, Result.env).where(Result.id.in_(result_ids)))
    return {rid: (env or {}).get("write_cache") or {} for rid, env in rows}


def _cannot_switch(found: Found, write_cache: dict[str, Any], asked: ParamValue) -> str:
    """Why a row asking for the device's write cache ``asked`` cannot have a value here,
    from the disks the kernel-only result's job changed (its ``env.write_cache``)."""
    disks = write_cache.get("disks") or {}
    named = [
        f"{name} ({disk.get('backend', 'kernel')} backend)"
        for name, disk in sorted(disks.items())
        if isinstance(disk, dict) and not disk.get("device_changed")
    ]
    where = ", ".join(named) if named else "the disk under test"
    return (
        f"{CANNOT_MEASURE}: only the kernel's view of the write cache of {where} could be "
        f"switched, so run {found.run_id} ran with write_cache=kernel-{_show(asked)}, not "
        f"with the drive's own cache {_show(asked)} as in the thesis; a disk whose cache the "
        "agent can switch (ATA, SCSI or NVMe, docs/write-cache.md) would give the row a value"
    )


def _candidates(
    session: Session, machine_id: int, epoch: int, what: tuple[str, str, str, str]
) -> list[Found]:
    suite, benchmark, sut, metric = what
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
            Result.write_cache,
            Result.flags,
            Job.params,
            Result.median_ci_low,
            Result.median_ci_high,
        )
        .join(Job, Job.id == Result.job_id)
        .where(
            Result.machine_id == machine_id,
            Result.epoch == epoch,
            Result.suite == suite,
            Result.benchmark == benchmark,
            Result.sut == sut,
            Result.metric == metric,
        )
        .order_by(Result.created_at.desc(), Result.id.desc())
        .limit(SCAN_LIMIT)
    ).all()
    return [
        Found(
            result_id=row[0],
            run_id=row[1],
            created_at=row[2],
            unit=row[3],
            n=row[4],
            stats=dict(
                zip(("mean", "median", "min", "max", "stddev", "p99"), row[5:11], strict=True)
            ),
            params=merge_params(row[11], row[12], row[14]),
            flags=row[13],
            median_ci=None if row[15] is None or row[16] is None else (row[15], row[16]),
        )
        for row in rows
    ]


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
