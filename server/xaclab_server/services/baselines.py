"""The runs a run is compared against in one click: the previous one on its machine, the baseline.

The **previous run** is the newest earlier run of the same suite on the same
machine that has results, of the same profile and params when there is one
(else of the same profile, else any).  The
**baseline** of a suite on a machine is the run an operator chose
(:class:`xaclab_server.models.Baseline`; one per machine and suite).
:func:`comparison_links` gives the comparison page's addresses for both and for
LIBXAC against each other system of the run.
"""

from dataclasses import dataclass
from urllib.parse import urlencode

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from xaclab_server.models import Baseline, Result, Run
from xaclab_server.models.base import utcnow
from xaclab_server.services.series_keys import canonical
from xaclab_server.services.systems import FLOOR, Systems

LIBXAC = "libxac"
# How many earlier runs of the suite are searched for one with the same profile and params.
PREVIOUS_LOOKED_AT = 200


class BaselineRefused(ValueError):
    """The run cannot be a baseline (it has no results); the message is a sentence."""


@dataclass(frozen=True, slots=True)
class Link:
    label: str
    url: str
    testid: str


def previous_run(*, session: Session, run: Run) -> Run | None:
    has_results = exists().where(Result.run_id == Run.id)
    earlier = list(
        session.scalars(
            select(Run)
            .where(
                Run.machine_id == run.machine_id,
                Run.suite == run.suite,
                Run.id != run.id,
                Run.created_at <= run.created_at,
                has_results,
            )
            .order_by(Run.created_at.desc(), Run.id.desc())
            .limit(PREVIOUS_LOOKED_AT)
        )
    )
    # A durable run's previous run is the last durable one, not the nondurable run between.
    params = canonical(run.params or {})
    same = [r for r in earlier if r.profile == run.profile]
    alike = [r for r in same if canonical(r.params or {}) == params]
    return next(iter(alike or same or earlier), None)


def baseline_of(*, session: Session, machine_id: int, suite: str) -> Baseline | None:
    return session.scalar(
        select(Baseline).where(Baseline.machine_id == machine_id, Baseline.suite == suite)
    )


def baselines_of(*, session: Session, machine_id: int) -> list[Baseline]:
    return list(
        session.scalars(
            select(Baseline).where(Baseline.machine_id == machine_id).order_by(Baseline.suite)
        )
    )


def set_baseline(*, session: Session, run: Run, user_id: int | None) -> Baseline:
    """Make ``run`` the baseline of its suite on its machine (replacing any); commit."""
    if session.scalar(select(Result.id).where(Result.run_id == run.id).limit(1)) is None:
        raise BaselineRefused(f"Run {run.id} has no results yet; a baseline needs results.")
    found = baseline_of(session=session, machine_id=run.machine_id, suite=run.suite)
    if found is None:
        found = Baseline(machine_id=run.machine_id, suite=run.suite, run_id=run.id)
        session.add(found)
    found.run_id = run.id
    found.set_by_id = user_id
    found.set_at = utcnow()
    session.commit()
    return found


def clear_baseline(*, session: Session, machine_id: int, suite: str) -> bool:
    """Forget the baseline of ``suite`` on the machine; whether there was one; commit."""
    found = baseline_of(session=session, machine_id=machine_id, suite=suite)
    if found is None:
        return False
    session.delete(found)
    session.commit()
    return True


def compare_url(**query: object) -> str:
    return "/compare?" + urlencode({k: v for k, v in query.items() if v is not None})


def comparison_links(
    *, session: Session, run: Run, systems: Systems, system_ratios: bool = True
) -> list[Link]:
    """One-click comparisons of ``run``: against the previous run on its machine, against
    the baseline, and (unless its suite declares ``system_ratios`` false: counts of
    failures, docs/suites.md) LIBXAC against every other system the run measured."""
    links = []
    previous = previous_run(session=session, run=run)
    if previous is not None:
        links.append(
            Link(
                f"Against the previous run on this machine (#{previous.id})",
                compare_url(kind="runs", a=previous.id, b=run.id),
                "compare-previous",
            )
        )
    baseline = baseline_of(session=session, machine_id=run.machine_id, suite=run.suite)
    if baseline is not None and baseline.run_id != run.id:
        links.append(
            Link(
                f"Against the baseline (#{baseline.run_id})",
                compare_url(kind="runs", a=baseline.run_id, b=run.id),
                "compare-baseline",
            )
        )
    measured = set(session.scalars(select(Result.sut).where(Result.run_id == run.id).distinct()))
    if system_ratios and LIBXAC in measured:
        for other in systems.order(measured - {LIBXAC, FLOOR}):
            links.append(
                Link(
                    f"LIBXAC against {systems.style(other).title}",
                    compare_url(kind="sut", a=other, b=LIBXAC, run=run.id),
                    f"compare-sut-{other}",
                )
            )
    return links
