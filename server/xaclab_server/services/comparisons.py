"""Comparisons: two groups of results matched pair by pair, each pair tested.

Four kinds (docs/server.md, "Comparisons"):

- ``runs``: any two runs; results match on suite, benchmark, sut, metric and params.
- ``machines``: the newest run of a suite on each of two machines, only when
  the machines are comparable: the same ``HARDWARE_FIELDS`` in their
  fingerprints (kernel, file system and the like may differ: those are what
  such a comparison is for).
- ``sut``: LIBXAC against Berkeley DB or LMDB inside one run (or matrix);
  results match on suite, benchmark, metric and their ``workload`` params, as
  paired ratios.
- ``factor``: one factor's two values inside one run or matrix (write cache
  on against off ...); a job's factor values count as the params of its results.

Which params are ``workload``, ``system`` or ``observed`` the suite files say
(:mod:`xaclab_contracts.roles`): a new knob of a program needs a line in its
suite file, not a change here.  ``observed`` params (what the kernel allowed)
are never matched on.

Each pair gets ``stat(B) / stat(A)`` with a seeded bootstrap interval and a
Mann–Whitney U test on the raw samples (:mod:`.significance`).  Results are
immutable, so a pair's numbers are cached by the ids of its results.

Several results for one key pool their samples.  When a result of a pair
carries a histogram (more than 100,000 samples), every result of both sides is
merged into one histogram per side (raw samples put into the same buckets),
and the pair is ``binned``: its statistics, bootstrap and U test use the
bucket representatives, values in one bucket counting as ties
(docs/server.md, "Comparisons").
"""

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session
from xaclab_contracts.fingerprint import HARDWARE_FIELDS, dig
from xaclab_contracts.roles import ParamRoles, shipped_roles
from xaclab_contracts.suites import Role

from xaclab_server.models import Job, Machine, Result, Run
from xaclab_server.services import histogram, significance
from xaclab_server.services.histogram import Histogram

# A sut comparison pairs every variant of A (say tree=btree, tree=cobtree) with
# every variant of B (mode=not_durable, mode=nosync) that ran the same workload:
# a variant is a result's params with these roles.
VARIANT_ROLES: frozenset[Role] = frozenset({"system", "observed"})
CACHE_SIZE = 4096
Statistic = Literal["median", "mean"]


class ComparisonError(ValueError):
    """A comparison that cannot be made; the message is a sentence (HTTP 422)."""


@dataclass(frozen=True, slots=True)
class Pair:
    suite: str
    benchmark: str
    metric: str
    unit: str
    better: str
    sut: str
    params: dict[str, Any]
    n_a: int
    n_b: int
    stat_a: float
    stat_b: float
    ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    test: str
    significant: bool
    verdict: str
    binned: bool  # compared on histogram buckets, not raw samples


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


@dataclass(frozen=True, slots=True)
class Row:
    """A result with the params it is matched on (its own plus its job's factors)."""

    result: Result
    params: dict[str, Any]


_cache: "OrderedDict[tuple[Any, ...], Pair]" = OrderedDict()
_cache_lock = threading.Lock()


def _canonical(params: dict[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


def as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _rows(session: Session, where: Iterable[Any]) -> list[Row]:
    found = session.execute(
        select(Result, Job.params)
        .join(Job, Job.id == Result.job_id)
        .where(*where)
        .order_by(Result.id)
    ).all()
    rows = []
    for result, job_params in found:
        merged = dict(result.params)
        for key, value in (job_params or {}).items():
            merged.setdefault(key, value)
        rows.append(Row(result=result, params=merged))
    return rows


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
    *, session: Session, a: int, b: int, statistic: Statistic, roles: ParamRoles | None = None
) -> Comparison:
    for run_id in (a, b):
        if session.get(Run, run_id) is None:
            raise ComparisonError(f"Run {run_id} does not exist.")
    rows_a = [Row(r.result, r.result.params) for r in _rows(session, [Result.run_id == a])]
    rows_b = [Row(r.result, r.result.params) for r in _rows(session, [Result.run_id == b])]
    comparison = Comparison("runs", f"run {a}", f"run {b}", statistic)
    _pair_up(comparison, rows_a, rows_b, key=_full_key(roles or shipped_roles()))
    return comparison


def hardware_differences(a: Machine, b: Machine) -> list[str]:
    differences = []
    for path in HARDWARE_FIELDS:
        left, right = dig(a.fingerprint, path), dig(b.fingerprint, path)
        if left != right:
            differences.append(f"{'.'.join(path)} ({left!r} against {right!r})")
    return differences


def compare_machines(
    *,
    session: Session,
    a: int,
    b: int,
    suite: str,
    statistic: Statistic,
    roles: ParamRoles | None = None,
) -> Comparison:
    machines = [session.get(Machine, m) for m in (a, b)]
    for machine_id, machine in zip((a, b), machines, strict=True):
        if machine is None:
            raise ComparisonError(f"Machine {machine_id} does not exist.")
    ma, mb = machines
    assert ma is not None and mb is not None
    differences = hardware_differences(ma, mb)
    if differences:
        raise ComparisonError(
            f"Machines {ma.name} and {mb.name} are not comparable: their hardware differs in "
            + "; ".join(differences)
            + ". Compare results of one machine, or of machines with the same hardware."
        )
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
        session=session, a=runs[0], b=runs[1], statistic=statistic, roles=roles
    )
    comparison.kind = "machines"
    comparison.a_label = f"{ma.name} (run {runs[0]})"
    comparison.b_label = f"{mb.name} (run {runs[1]})"
    comparison.note = "Same hardware fields: " + ", ".join(".".join(p) for p in HARDWARE_FIELDS)
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
    comparison = Comparison("sut", a, b, statistic)
    side_a = _variants([r for r in rows if r.result.sut == a], roles)
    side_b = _variants([r for r in rows if r.result.sut == b], roles)
    comparison.only_a = len(set(side_a) - set(side_b))
    comparison.only_b = len(set(side_b) - set(side_a))
    for workload in sorted(set(side_a) & set(side_b)):
        for variant_a, group_a in sorted(side_a[workload].items()):
            for variant_b, group_b in sorted(side_b[workload].items()):
                pair = _pair(group_a, group_b, statistic)
                labelled = {
                    **_params_without(group_a[0], roles, VARIANT_ROLES),
                    **{f"{a}.{k}": v for k, v in json.loads(variant_a).items()},
                    **{f"{b}.{k}": v for k, v in json.loads(variant_b).items()},
                }
                comparison.pairs.append(replace(pair, params=labelled))
    told_apart = {k for r in rows if r.result.sut in (a, b) for k in _variant_params(r, roles)}
    comparison.note = (
        "Matched on the workload; system-specific params tell variants apart and every "
        f"variant of {a} is paired with every variant of {b}: "
        + (", ".join(sorted(told_apart)) or "none")
    )
    return comparison


def _variants(rows: list[Row], roles: ParamRoles) -> dict[tuple[str, ...], dict[str, list[Row]]]:
    """Rows by workload key, then by their system-specific (and observed) params."""
    grouped: dict[tuple[str, ...], dict[str, list[Row]]] = {}
    for row in rows:
        variant = _canonical(_variant_params(row, roles))
        r = row.result
        workload = _canonical(_params_without(row, roles, VARIANT_ROLES))
        grouped.setdefault((r.suite, r.benchmark, r.metric, r.unit, workload), {}).setdefault(
            variant, []
        ).append(row)
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
    comparison = Comparison("factor", f"{factor}={a}", f"{factor}={b}", statistic)

    def side(value: str) -> list[Row]:
        return [
            Row(r.result, {k: v for k, v in r.params.items() if k != factor})
            for r in rows
            if factor in r.params and as_text(r.params[factor]) == value
        ]

    _pair_up(comparison, side(a), side(b), key=_full_key(roles or shipped_roles()))
    return comparison


def _params_without(row: Row, roles: ParamRoles, left_out: frozenset[Role]) -> dict[str, Any]:
    suite = row.result.suite
    return {k: v for k, v in row.params.items() if roles.role(suite, k) not in left_out}


def _variant_params(row: Row, roles: ParamRoles) -> dict[str, Any]:
    suite = row.result.suite
    return {k: v for k, v in row.params.items() if roles.role(suite, k) in VARIANT_ROLES}


def _full_key(roles: ParamRoles) -> Callable[[Row], tuple[str, ...]]:
    """Suite, benchmark, sut, metric, unit and every param but the observed ones."""
    observed: frozenset[Role] = frozenset({"observed"})

    def key(row: Row) -> tuple[str, ...]:
        r = row.result
        kept = _params_without(row, roles, observed)
        return (r.suite, r.benchmark, r.sut, r.metric, r.unit, _canonical(kept))

    return key


def _pair_up(
    comparison: Comparison,
    rows_a: list[Row],
    rows_b: list[Row],
    *,
    key: Callable[[Row], tuple[str, ...]],
) -> None:
    groups_a: dict[tuple[str, ...], list[Row]] = {}
    groups_b: dict[tuple[str, ...], list[Row]] = {}
    for rows, groups in ((rows_a, groups_a), (rows_b, groups_b)):
        for row in rows:
            groups.setdefault(key(row), []).append(row)
    comparison.only_a = len(set(groups_a) - set(groups_b))
    comparison.only_b = len(set(groups_b) - set(groups_a))
    for k in sorted(set(groups_a) & set(groups_b)):
        comparison.pairs.append(_pair(groups_a[k], groups_b[k], comparison.statistic))


def _samples(rows: list[Row]) -> np.ndarray[Any, np.dtype[np.float64]]:
    # Several results for one key (a resent or repeated measurement) pool their samples.
    return np.concatenate([np.frombuffer(r.result.samples, dtype="<f8") for r in rows])


def _histogram(rows: list[Row]) -> Histogram:
    """The side's results merged into one histogram; raw samples go into the same buckets."""
    parts = []
    for row in rows:
        stored = row.result.histogram
        if stored is not None:
            parts.append(histogram.unpack(stored))
        else:
            parts.append(histogram.from_samples(np.frombuffer(row.result.samples, dtype="<f8")))
    return histogram.merge(parts)


def _pair(rows_a: list[Row], rows_b: list[Row], statistic: Statistic) -> Pair:
    cache_key = (
        tuple(r.result.id for r in rows_a),
        tuple(r.result.id for r in rows_b),
        statistic,
        _canonical(rows_a[0].params),
    )
    with _cache_lock:
        cached = _cache.get(cache_key)
        if cached is not None:
            _cache.move_to_end(cache_key)
            return cached
    binned = any(r.result.histogram is not None for r in (*rows_a, *rows_b))
    xa: significance.Group
    xb: significance.Group
    if binned:
        ha, hb = _histogram(rows_a), _histogram(rows_b)
        xa, xb, n_a, n_b = ha, hb, ha.count, hb.count
        test = significance.mann_whitney_u_binned(ha, hb)
    else:
        xa, xb = _samples(rows_a), _samples(rows_b)
        n_a, n_b = len(xa), len(xb)
        test = significance.mann_whitney_u(xa, xb)
    first = rows_a[0].result
    second_sut = rows_b[0].result.sut
    interval = significance.bootstrap_ratio(xa, xb, statistic=statistic)
    significant, sentence = significance.verdict(p=test.p, interval=interval, better=first.better)
    pair = Pair(
        suite=first.suite,
        benchmark=first.benchmark,
        metric=first.metric,
        unit=first.unit,
        better=first.better,
        sut=first.sut if first.sut == second_sut else f"{first.sut}/{second_sut}",
        params=rows_a[0].params,
        n_a=n_a,
        n_b=n_b,
        stat_a=significance.group_statistic(xa, statistic),
        stat_b=significance.group_statistic(xb, statistic),
        ratio=interval.ratio,
        ci_low=interval.low,
        ci_high=interval.high,
        p_value=test.p,
        test=test.method,
        significant=significant,
        verdict=sentence,
        binned=binned,
    )
    with _cache_lock:
        _cache[cache_key] = pair
        if len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return pair
