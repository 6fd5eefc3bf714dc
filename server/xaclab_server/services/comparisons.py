"""Comparisons: two groups of results matched pair by pair, each pair tested.

Four kinds (docs/server.md, "Comparisons"):

- ``runs``: any two runs; results match on suite, benchmark, sut, metric and params.
- ``machines``: the newest run of a suite on each of two machines.
- ``sut``: LIBXAC against Berkeley DB or LMDB inside one run (or matrix);
  results match on suite, benchmark, metric and their ``workload`` params, as
  paired ratios.
- ``factor``: one factor's two values inside one run or matrix (write cache
  on against off ...); a job's factor values count as the params of its results.

Which params are ``workload``, ``system`` or ``observed`` the suite files say
(:mod:`xaclab_contracts.roles`): a new knob of a program needs a line in its
suite file, not a change here.  ``observed`` params (what the kernel allowed)
are never matched on.  A result's ``write_cache`` param is matched on with its
scope (:func:`xaclab_contracts.validity.write_cache_setting`): ``kernel-off``,
the kernel's view alone, never pairs with the device's ``off``.

Runs and machines are compared only within one identity fingerprint and
epoch, unless the caller asks for a cross-machine comparison
(:mod:`.comparability`); a run or matrix's sut and factor comparisons pair
results of one machine epoch only, and say which.  Each pair is measured by
:mod:`.pairs`, and the verdicts are decided over all of them (:mod:`.verdicts`:
Benjamini–Hochberg, and the doubts of flagged results).
"""

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from xaclab_contracts.roles import ParamRoles, shipped_roles
from xaclab_contracts.suites import Role
from xaclab_contracts.validity import WRITE_CACHE_LABELS

from xaclab_server.models import Job, Machine, Result, Run
from xaclab_server.services import comparability, verdicts
from xaclab_server.services.comparability import ComparisonError, Epochs, epoch_of
from xaclab_server.services.pairs import Pair, Row, Statistic, canonical, measure
from xaclab_server.services.systems import title_of
from xaclab_server.services.unpaired import why_apart, why_unpaired

# A sut comparison pairs every variant of A (say tree=btree, tree=cobtree) with
# every variant of B (mode=not_durable, mode=nosync) that ran the same workload:
# a variant is a result's params with these roles.
VARIANT_ROLES: frozenset[Role] = frozenset({"system", "observed"})
__all__ = ["Comparison", "ComparisonError", "Pair"]


@dataclass(slots=True)
class Comparison:
    kind: str
    a_label: str
    b_label: str
    statistic: Statistic
    pairs: list[Pair] = field(default_factory=list)
    only_a: int = 0
    only_b: int = 0
    note: str = ""
    cross_machine: bool = False
    fingerprint_differences: list[str] = field(default_factory=list)


def as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def matched_params(result: Result, job_params: dict[str, Any] | None) -> dict[str, Any]:
    """The params a result is matched on: its own, its job's where it has none, and
    ``write_cache`` with its scope (``kernel-off`` is not the device's ``off``)."""
    return merge_params(result.params, result.write_cache, job_params)


def merge_params(
    params: dict[str, Any], write_cache: str | None, job_params: dict[str, Any] | None
) -> dict[str, Any]:
    merged = dict(params or {})
    for key, value in (job_params or {}).items():
        merged.setdefault(key, value)
    if "write_cache" in merged and write_cache is not None:
        merged["write_cache"] = write_cache
    return merged


def _rows(session: Session, where: Iterable[Any], *, with_job: bool = True) -> list[Row]:
    found = session.execute(
        select(Result, Job.params)
        .join(Job, Job.id == Result.job_id)
        .where(*where)
        .order_by(Result.id)
    ).all()
    return [Row(r, matched_params(r, jp if with_job else None)) for r, jp in found]


def _scope(session: Session, *, run_id: int | None, matrix_id: int | None) -> list[Any]:
    if run_id is not None:
        if session.get(Run, run_id) is None:
            raise ComparisonError(f"Run {run_id} does not exist.")
        return [Result.run_id == run_id]
    if matrix_id is not None:
        run_ids = select(Run.id).where(Run.matrix_id == matrix_id)
        return [Result.run_id.in_(run_ids)]
    raise ComparisonError("Name the run or the matrix whose results to compare.")


def compare_runs(
    *,
    session: Session,
    a: int,
    b: int,
    statistic: Statistic,
    roles: ParamRoles | None = None,
    cross_machine: bool = False,
    labels: tuple[str, str] | None = None,
) -> Comparison:
    """Run B against run A; NotComparable (409) across identity fingerprints or epochs
    unless ``cross_machine``."""
    for run_id in (a, b):
        if session.get(Run, run_id) is None:
            raise ComparisonError(f"Run {run_id} does not exist.")
    rows_a = _rows(session, [Result.run_id == a], with_job=False)
    rows_b = _rows(session, [Result.run_id == b], with_job=False)
    a_label, b_label = labels or (f"run {a}", f"run {b}")
    comparison = Comparison("runs", a_label, b_label, statistic, cross_machine=cross_machine)
    side_a, side_b = {epoch_of(r) for r in rows_a}, {epoch_of(r) for r in rows_b}
    epochs = comparability.load_epochs(session, side_a | side_b)
    comparison.fingerprint_differences = comparability.check(
        epochs,
        side_a,
        side_b,
        a_label=a_label,
        b_label=b_label,
        cross_machine=cross_machine,
        carried=comparability.env_differences(rows_a, rows_b),
    )
    roles = roles or shipped_roles()
    _pair_up(comparison, rows_a, rows_b, key=_full_key(roles), epochs=epochs)
    apart = (
        why_apart((a_label, rows_a), (b_label, rows_b), role=roles.role, roles=PAIRED_ROLES)
        if rows_a and rows_b and not comparison.pairs
        else ""
    )
    comparison.note = _no_pair(apart) + _epochs_note(epochs, side_a, side_b, comparison)
    return comparison


def _epochs_note(
    epochs: Epochs, side_a: set[tuple[int, int]], side_b: set[tuple[int, int]], c: Comparison
) -> str:
    if not side_a or not side_b:
        return ""
    if side_a == side_b and not c.fingerprint_differences:
        return f"Both sides ran on {epochs.label(side_a)}."
    if c.fingerprint_differences:
        return (
            f"Cross-machine comparison: A ran on {epochs.label(side_a)}, B on "
            f"{epochs.label(side_b)}; their identity fingerprints differ in "
            + "; ".join(c.fingerprint_differences)
            + ". Every pair names those fields."
        )
    return (
        f"A ran on {epochs.label(side_a)}, B on {epochs.label(side_b)}: different "
        "epochs or machines with the same identity fingerprint."
    )


def compare_machines(
    *,
    session: Session,
    a: int,
    b: int,
    suite: str,
    statistic: Statistic,
    roles: ParamRoles | None = None,
    cross_machine: bool = False,
) -> Comparison:
    """The newest run of ``suite`` on each machine, compared as runs are."""
    machines = [session.get(Machine, m) for m in (a, b)]
    for machine_id, machine in zip((a, b), machines, strict=True):
        if machine is None:
            raise ComparisonError(f"Machine {machine_id} does not exist.")
    ma, mb = machines
    assert ma is not None and mb is not None
    runs = []
    for machine in (ma, mb):
        run_id = session.scalar(
            select(Result.run_id)
            .where(Result.machine_id == machine.id, Result.suite == suite)
            .order_by(Result.created_at.desc(), Result.id.desc())
            .limit(1)
        )
        if run_id is None:
            raise ComparisonError(f"Machine {machine.name} has no {suite} results.")
        runs.append(run_id)
    comparison = compare_runs(
        session=session,
        a=runs[0],
        b=runs[1],
        statistic=statistic,
        roles=roles,
        cross_machine=cross_machine,
        labels=(f"{ma.name} (run {runs[0]})", f"{mb.name} (run {runs[1]})"),
    )
    comparison.kind = "machines"
    return comparison


def compare_suts(
    *,
    session: Session,
    a: str,
    b: str,
    run_id: int | None,
    matrix_id: int | None,
    statistic: Statistic,
    roles: ParamRoles | None = None,
) -> Comparison:
    roles = roles or shipped_roles()
    rows = _rows(session, _scope(session, run_id=run_id, matrix_id=matrix_id))
    epochs = comparability.load_epochs(session, {epoch_of(r) for r in rows})
    comparison = Comparison("sut", a, b, statistic)
    side_a = _variants([r for r in rows if r.result.sut == a], roles)
    side_b = _variants([r for r in rows if r.result.sut == b], roles)
    comparison.only_a = len(set(side_a) - set(side_b))
    comparison.only_b = len(set(side_b) - set(side_a))
    pairs = []
    for workload in sorted(set(side_a) & set(side_b)):
        for variant_a, group_a in sorted(side_a[workload].items()):
            for variant_b, group_b in sorted(side_b[workload].items()):
                labelled = {
                    **_params_without(group_a[0], roles, VARIANT_ROLES),
                    **{f"{a}.{k}": v for k, v in json.loads(variant_a).items()},
                    **{f"{b}.{k}": v for k, v in json.loads(variant_b).items()},
                }
                pair = _placed(measure(group_a, group_b, statistic), group_a, group_b, epochs)
                pairs.append(replace(pair, params=labelled))
    comparison.pairs = verdicts.finish(pairs)
    told_apart = {k for r in rows if r.result.sut in (a, b) for k in _variant_params(r, roles)}
    comparison.note = (
        _unpaired_note(rows, a, b, roles) if side_a and side_b and not pairs else ""
    ) + (
        "Matched on the workload; system-specific params tell variants apart and every "
        f"variant of {a} is paired with every variant of {b}: "
        + (", ".join(sorted(told_apart)) or "none")
        + ". "
        + _within_epochs_note(epochs, rows)
    )
    return comparison


def _unpaired_note(rows: list[Row], a: str, b: str, roles: ParamRoles) -> str:
    """Both systems ran, yet no workload of one is a workload of the other: say what differs
    (B first, as the page's title reads: "LIBXAC against Berkeley DB")."""
    return _no_pair(why_unpaired(rows, b, a, title=title_of, role=roles.role))


def _no_pair(why: str) -> str:
    """The sentence a note opens with when its sides have no pair; "" without a reason."""
    return f"No pair: {why}. " if why else ""


def _within_epochs_note(epochs: Epochs, rows: list[Row]) -> str:
    keys = {epoch_of(r) for r in rows}
    if len(keys) <= 1:
        return f"All results ran on {epochs.label(keys)}." if keys else ""
    return (
        f"The results span {epochs.label(keys)}; each pair is within one machine epoch "
        "(where_a, where_b)."
    )


def _variants(rows: list[Row], roles: ParamRoles) -> dict[tuple[str, ...], dict[str, list[Row]]]:
    """Rows by workload key (within one machine epoch), then by their system-specific (and
    observed) params."""
    grouped: dict[tuple[str, ...], dict[str, list[Row]]] = {}
    for row in rows:
        variant = canonical(_variant_params(row, roles))
        r = row.result
        workload = canonical(_params_without(row, roles, VARIANT_ROLES))
        where = f"{r.machine_id}:{r.epoch}"
        grouped.setdefault(
            (where, r.suite, r.benchmark, r.metric, r.unit, workload), {}
        ).setdefault(variant, []).append(row)
    return grouped


def compare_factor(
    *,
    session: Session,
    factor: str,
    a: str,
    b: str,
    run_id: int | None,
    matrix_id: int | None,
    statistic: Statistic,
    roles: ParamRoles | None = None,
) -> Comparison:
    rows = _rows(session, _scope(session, run_id=run_id, matrix_id=matrix_id))
    epochs = comparability.load_epochs(session, {epoch_of(r) for r in rows})
    comparison = Comparison("factor", f"{factor}={a}", f"{factor}={b}", statistic)

    def side(value: str) -> list[Row]:
        return [
            Row(r.result, {k: v for k, v in r.params.items() if k != factor})
            for r in rows
            if factor in r.params and as_text(r.params[factor]) == value
        ]

    full = _full_key(roles or shipped_roles())
    _pair_up(
        comparison,
        side(a),
        side(b),
        key=lambda row: (f"{row.result.machine_id}:{row.result.epoch}", *full(row)),
        epochs=epochs,
    )
    notes = [_within_epochs_note(epochs, rows)]
    if factor == "write_cache":
        notes.append(_write_cache_note(rows, (a, b)))
    comparison.note = " ".join(n for n in notes if n)
    return comparison


def _write_cache_note(rows: list[Row], asked: tuple[str, str]) -> str:
    """Say where kernel-only write-cache results went: under their own values, not off/on."""
    found: dict[str, int] = {}
    for row in rows:
        value = row.result.write_cache
        if value in ("kernel-on", "kernel-off") and value not in asked:
            found[value] = found.get(value, 0) + 1
    return " ".join(
        f"{count} result(s) changed only the kernel's view of the write cache "
        f"({WRITE_CACHE_LABELS[value]}): they are not write_cache="
        f"{value.removeprefix('kernel-')}; compare them as write_cache={value}."
        for value, count in sorted(found.items())
    )


def _params_without(row: Row, roles: ParamRoles, left_out: frozenset[Role]) -> dict[str, Any]:
    suite = row.result.suite
    return {k: v for k, v in row.params.items() if roles.role(suite, k) not in left_out}


def _variant_params(row: Row, roles: ParamRoles) -> dict[str, Any]:
    suite = row.result.suite
    return {k: v for k, v in row.params.items() if roles.role(suite, k) in VARIANT_ROLES}


# The roles of the params two runs' results pair on (every one but the observed).
PAIRED_ROLES = ("workload", "system")


def _full_key(roles: ParamRoles) -> Callable[[Row], tuple[str, ...]]:
    """Suite, benchmark, sut, metric, unit and every param but the observed ones."""
    observed: frozenset[Role] = frozenset({"observed"})

    def key(row: Row) -> tuple[str, ...]:
        r = row.result
        kept = _params_without(row, roles, observed)
        return (r.suite, r.benchmark, r.sut, r.metric, r.unit, canonical(kept))

    return key


def _pair_up(
    comparison: Comparison,
    rows_a: list[Row],
    rows_b: list[Row],
    *,
    key: Callable[[Row], tuple[str, ...]],
    epochs: Epochs,
) -> None:
    groups_a: dict[tuple[str, ...], list[Row]] = {}
    groups_b: dict[tuple[str, ...], list[Row]] = {}
    for rows, groups in ((rows_a, groups_a), (rows_b, groups_b)):
        for row in rows:
            groups.setdefault(key(row), []).append(row)
    comparison.only_a = len(set(groups_a) - set(groups_b))
    comparison.only_b = len(set(groups_b) - set(groups_a))
    pairs = []
    for k in sorted(set(groups_a) & set(groups_b)):
        measured = measure(groups_a[k], groups_b[k], comparison.statistic)
        pairs.append(_placed(measured, groups_a[k], groups_b[k], epochs))
    comparison.pairs = verdicts.finish(pairs)


def _placed(pair: Pair, rows_a: list[Row], rows_b: list[Row], epochs: Epochs) -> Pair:
    """The pair with where each side ran and, across fingerprints, the fields that differ."""
    side_a, side_b = {epoch_of(r) for r in rows_a}, {epoch_of(r) for r in rows_b}
    differences = epochs.differences(side_a, side_b)
    differences += [
        d for d in comparability.env_differences(rows_a, rows_b) if d not in differences
    ]
    return replace(
        pair,
        where_a=epochs.label(side_a),
        where_b=epochs.label(side_b),
        fingerprint_differences=differences,
    )
