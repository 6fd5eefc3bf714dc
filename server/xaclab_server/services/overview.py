"""A machine's overview in one epoch: for each suite, how LIBXAC compares and how it has moved.

Per suite with results in the epoch:

- its **latest run** (the run of its newest result) with how many results
  are flagged (docs/validity.md);
- **LIBXAC against every other system** that run measured (the suites say
  which: Berkeley DB, LMDB, the operating system ...), each a systems
  comparison (``kind=sut``: ratios with 95% intervals, Benjamini–Hochberg
  verdicts, flagged pairs in doubt), unless the suite declares
  ``system_ratios`` false (the crash suite's counts); where the latest run has no workload
  both ran (a search-tree run from before the suite's default durability:
  the LIBXAC trees nondurable, the baselines durable), the comparison comes
  from the epoch's latest run that has one, and says so and what differed;
  with none, a sentence names what differed;
- its **measures** (every series of the latest run; those the comparisons
  cover first), each with its median, interval and flags and a small trend:
  the series' medians over the epoch's last :data:`TREND_RUNS` runs.
"""

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
from xaclab_server.services.compare_view import ForestView, forest, shared_params
from xaclab_server.services.comparisons import compare_suts, matched_params
from xaclab_server.services.epochs import epochs_with_changes
from xaclab_server.services.pairs import Row
from xaclab_server.services.result_views import flags_of, result_interval
from xaclab_server.services.series_keys import SeriesKey, history_url, series_key
from xaclab_server.services.suites import Suite
from xaclab_server.services.systems import Systems, params_words, title_of
from xaclab_server.services.unpaired import why_unpaired

TREND_RUNS = 12


@dataclass(frozen=True, slots=True)
class SystemComparison:
    other: str
    other_title: str
    comparison: ComparisonOut
    view: ForestView
    url: str
    run_id: int  # the run compared in: the latest, or the latest with a common workload
    note: str = ""  # why it is not the latest run, in words


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
    suts_of: dict[int, set[str]] = {}
    for result, _p in found:
        suts_of.setdefault(result.run_id, set()).add(result.sut)
    if suite is not None and not suite.system_ratios and len(measured) > 1:
        view.not_compared.append(
            "Its measures are counts and times per system, which a ratio would not make "
            "clearer (a system that lost nothing against one that lost nothing is no number), "
            "so each system's values are listed below, not divided."
        )
    elif LIBXAC in measured:
        for other in [s for s in measured if s != LIBXAC]:
            both = [r for r in run_ids if {LIBXAC, other} <= suts_of.get(r, set())]
            why = _unshared(own, other, name, systems, roles)
            _compare(session, view, both, other, why, systems, roles)
    compared = {(p.benchmark, p.metric) for c in view.comparisons for p in c.comparison.pairs}
    view.measures, view.common = _measures(found, latest.id, systems, roles, compared)
    return view


def _compare(
    session: Session,
    view: SuiteOverview,
    run_ids: list[int],
    other: str,
    why: str,
    systems: Systems,
    roles: ParamRoles,
) -> None:
    """LIBXAC against ``other`` in the newest of ``run_ids`` (runs that measured both, newest
    first) in which they ran a common workload."""
    title = systems.style(other).title
    latest = view.latest.id
    because = f" ({why})" if why else ""
    for run_id in run_ids:
        comparison = comparison_out(
            compare_suts(
                session=session,
                a=other,
                b=LIBXAC,
                run_id=run_id,
                matrix_id=None,
                statistic="median",
                roles=roles,
            )
        )
        if not comparison.pairs:
            continue
        note = (
            ""
            if run_id == latest
            else f"From run #{run_id}, the latest run of this epoch in which LIBXAC and {title} "
            f"ran a common workload: in the latest run, #{latest}, they ran none{because}."
        )
        view.comparisons.append(
            SystemComparison(
                other=other,
                other_title=title,
                comparison=comparison,
                view=forest(comparison),
                url=compare_url(kind="sut", a=other, b=LIBXAC, run=run_id),
                run_id=run_id,
                note=note,
            )
        )
        return
    view.not_compared.append(
        f"{title}: no run of this epoch measured it on a workload LIBXAC ran too{because}, so "
        "there is no ratio to give; its values are among the measures below."
    )


def _unshared(
    rows: Sequence[Any], other: str, suite: str, systems: Systems, roles: ParamRoles
) -> str:
    """Why LIBXAC and ``other`` have no pair in ``rows`` ((result, job params) of one run), in
    words (services/unpaired.py)."""
    return why_unpaired(
        [Row(result, matched_params(result, job_params)) for result, job_params in rows],
        LIBXAC,
        other,
        title=title_of,
        role=lambda _suite, key: roles.role(suite, key),
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
