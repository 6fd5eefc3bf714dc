"""A machine's overview in one epoch: for each suite, how LIBXAC compares and how it has moved.

Per suite with results in the epoch:

- its **latest run** (the run of its newest result) with how many results
  are flagged (docs/validity.md);
- **LIBXAC against every other system** that run measured (the suites say
  which: Berkeley DB, LMDB, the operating system ...), each a systems
  comparison (``kind=sut``: ratios with 95% intervals, Benjamini–Hochberg
  verdicts, flagged pairs in doubt); a system with no workload in common
  with LIBXAC is named with a sentence instead;
- its **measures** (every series of the latest run; those the comparisons
  cover first), each with its median, interval and flags and a small trend:
  the series' medians over the epoch's last :data:`TREND_RUNS` runs.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from xaclab_contracts.roles import ParamRoles

from xaclab_server.models import Job, Machine, Result, Run
from xaclab_server.schemas.comparison import ComparisonOut
from xaclab_server.schemas.machine import EpochOut
from xaclab_server.services.baselines import LIBXAC, compare_url
from xaclab_server.services.compare_runs import comparison_out
from xaclab_server.services.compare_view import ForestView, forest
from xaclab_server.services.comparisons import compare_suts, matched_params
from xaclab_server.services.epochs import epochs_with_changes
from xaclab_server.services.result_views import flags_of, result_interval
from xaclab_server.services.series_keys import SeriesKey, history_url, series_key
from xaclab_server.services.suites import Suite
from xaclab_server.services.systems import Systems, params_words

TREND_RUNS = 12


@dataclass(frozen=True, slots=True)
class SystemComparison:
    other: str
    other_title: str
    comparison: ComparisonOut
    view: ForestView
    url: str


@dataclass(frozen=True, slots=True)
class Measure:
    system: str
    system_title: str
    colour: str
    label: str  # the params that set it apart, in words
    metric: str
    unit: str
    better: str
    median: float
    low: float | None
    high: float | None
    interval: str
    n: int
    flags: dict[str, str] | None
    trend: list[float]  # the series' medians, oldest first, the latest run's last
    history_url: str
    compared: bool  # a metric the comparisons above cover


@dataclass(slots=True)
class SuiteOverview:
    suite: str
    title: str
    latest: Run
    runs: int
    results: int
    flagged: int
    comparisons: list[SystemComparison] = field(default_factory=list)
    not_compared: list[str] = field(default_factory=list)  # sentences
    measures: list[Measure] = field(default_factory=list)
    common: str = ""  # the params every measure shares, in words


@dataclass(slots=True)
class Overview:
    machine: Machine
    epoch: int
    epochs: list[EpochOut]
    suites: list[SuiteOverview]


def machine_overview(
    *,
    session: Session,
    machine: Machine,
    epoch: int,
    suites: dict[str, Suite],
    systems: Systems,
    roles: ParamRoles,
) -> Overview:
    in_epoch = (Result.machine_id == machine.id, Result.epoch == epoch)
    names = set(session.scalars(select(Result.suite).where(*in_epoch).distinct()))
    ordered = [s for s in sorted(suites) if s in names] + sorted(names - set(suites))
    out = []
    for name in ordered:
        out.append(_suite(session, machine, epoch, name, suites.get(name), systems, roles))
    return Overview(
        machine=machine,
        epoch=epoch,
        epochs=epochs_with_changes(session=session, machine_id=machine.id),
        suites=out,
    )


def _suite(
    session: Session,
    machine: Machine,
    epoch: int,
    name: str,
    suite: Suite | None,
    systems: Systems,
    roles: ParamRoles,
) -> SuiteOverview:
    where = (Result.machine_id == machine.id, Result.epoch == epoch, Result.suite == name)
    run_ids = list(
        dict.fromkeys(
            session.scalars(
                select(Result.run_id).where(*where).order_by(Result.created_at.desc()).limit(5000)
            )
        )
    )[:TREND_RUNS]
    latest = session.get_one(Run, run_ids[0])
    found = session.execute(
        select(Result, Job.params)
        .join(Job, Job.id == Result.job_id)
        .where(*where, Result.run_id.in_(run_ids))
        .order_by(Result.created_at, Result.id)
    ).all()
    own = [(r, p) for r, p in found if r.run_id == latest.id]
    view = SuiteOverview(
        suite=name,
        title=suite.title if suite else name,
        latest=latest,
        runs=len(run_ids),
        results=len(own),
        flagged=sum(r.flags is None or bool(r.flags) for r, _p in own),
    )
    measured = systems.order({r.sut for r, _p in own})
    if LIBXAC in measured:
        for other in [s for s in measured if s != LIBXAC]:
            _compare(session, view, latest, other, systems, roles)
    compared = {(p.benchmark, p.metric) for c in view.comparisons for p in c.comparison.pairs}
    view.measures, view.common = _measures(found, latest.id, systems, roles, compared)
    return view


def _compare(
    session: Session,
    view: SuiteOverview,
    latest: Run,
    other: str,
    systems: Systems,
    roles: ParamRoles,
) -> None:
    title = systems.style(other).title
    comparison = comparison_out(
        compare_suts(
            session=session,
            a=other,
            b=LIBXAC,
            run_id=latest.id,
            matrix_id=None,
            statistic="median",
            roles=roles,
        )
    )
    if not comparison.pairs:
        view.not_compared.append(
            f"{title}: the latest run measured it on no workload LIBXAC ran too, so there is "
            "no ratio to give; its values are among the measures below."
        )
        return
    view.comparisons.append(
        SystemComparison(
            other=other,
            other_title=title,
            comparison=comparison,
            view=forest(comparison),
            url=compare_url(kind="sut", a=other, b=LIBXAC, run=latest.id),
        )
    )


def _measures(
    found: Sequence[Any],
    latest_id: int,
    systems: Systems,
    roles: ParamRoles,
    compared: set[tuple[str, str]],
) -> tuple[list[Measure], str]:
    """The latest run's series with their trends, and the params they all share in words."""
    trends: dict[SeriesKey, list[float]] = {}
    latest: list[tuple[Result, SeriesKey]] = []
    for result, job_params in found:
        key = series_key(result, matched_params(result, job_params), roles)
        trends.setdefault(key, []).append(result.median)
        if result.run_id == latest_id:
            latest.append((result, key))
    shared = shared_params([key.params_dict for _r, key in latest])
    measures = []
    for result, key in latest:
        differs = {k: v for k, v in key.params_dict.items() if k not in shared}
        low, high, kind = result_interval(result)
        style = systems.style(result.sut)
        measures.append(
            Measure(
                system=result.sut,
                system_title=style.title,
                colour=style.colour,
                label=" · ".join(p for p in (result.benchmark, params_words(differs)) if p),
                metric=result.metric,
                unit=result.unit,
                better=result.better,
                median=result.median,
                low=low,
                high=high,
                interval=kind,
                n=result.n,
                flags=flags_of(result),
                trend=trends[key],
                history_url=history_url(key),
                compared=(result.benchmark, result.metric) in compared,
            )
        )
    order = {name: i for i, name in enumerate(systems.order({m.system for m in measures}))}
    measures.sort(key=lambda m: (not m.compared, order[m.system]))
    return measures, params_words(shared)


def shared_params(all_params: list[dict[str, Any]]) -> dict[str, Any]:
    """The params every one of ``all_params`` has, with one value."""
    if not all_params:
        return {}
    first = all_params[0]
    return {
        k: v
        for k, v in sorted(first.items())
        if all(k in p and json.dumps(p[k]) == json.dumps(v) for p in all_params)
    }
