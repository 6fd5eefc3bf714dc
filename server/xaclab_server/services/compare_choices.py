"""What the comparison page offers to pick from: runs, matrices, machines, suites, systems
and factors, newest first, each described in words; and the choices it starts with.

Systems come from the suites' declarations and from the results (a system an
older suite measured still shows); factors are the params the suites declare
and the ones the agent applies itself, with the values recent jobs used.
"""

from dataclasses import dataclass, field

from sqlalchemy import exists, select
from sqlalchemy.orm import Session
from xaclab_contracts.suites import AGENT_FACTOR_NAMES

from xaclab_server.models import Job, Machine, Matrix, Result, Run
from xaclab_server.services.comparisons import as_text
from xaclab_server.services.suites import Suite
from xaclab_server.services.systems import Systems

RUN_CHOICES = 300
MATRIX_CHOICES = 100
RECENT_JOBS = 500


@dataclass(frozen=True, slots=True)
class Choice:
    value: str
    label: str


@dataclass(slots=True)
class Choices:
    runs: list[Choice] = field(default_factory=list)
    matrices: list[Choice] = field(default_factory=list)
    machines: list[Choice] = field(default_factory=list)
    suites: list[Choice] = field(default_factory=list)
    systems: list[Choice] = field(default_factory=list)
    factors: list[Choice] = field(default_factory=list)
    factor_values: list[str] = field(default_factory=list)
    # The starting choices: the newest run with results against the one before it.
    newest_run: int | None = None
    previous_of_newest: int | None = None


def run_label(run: Run, machine_name: str) -> str:
    return (
        f"#{run.id} · {run.suite} {run.profile} · {machine_name} · "
        f"{run.created_at:%Y-%m-%d %H:%M} · {run.status}"
    )


def compare_choices(*, session: Session, suites: dict[str, Suite], systems: Systems) -> Choices:
    names = {m.id: m.name for m in session.scalars(select(Machine).order_by(Machine.name))}
    has_results = exists().where(Result.run_id == Run.id)
    runs = session.execute(
        select(Run, has_results).order_by(Run.created_at.desc(), Run.id.desc()).limit(RUN_CHOICES)
    ).all()
    choices = Choices()
    choices.runs = [
        Choice(str(run.id), run_label(run, names.get(run.machine_id, str(run.machine_id))))
        for run, _with_results in runs
    ]
    with_results = [run for run, found in runs if found]
    if with_results:
        newest = with_results[0]
        choices.newest_run = newest.id
        before = [
            r
            for r in with_results[1:]
            if (r.machine_id, r.suite) == (newest.machine_id, newest.suite)
        ]
        choices.previous_of_newest = before[0].id if before else None
    matrices = session.scalars(select(Matrix).order_by(Matrix.id.desc()).limit(MATRIX_CHOICES))
    choices.matrices = [
        Choice(
            str(m.id),
            f"#{m.id} · {', '.join(m.spec.get('suites', []))} · {m.created_at:%Y-%m-%d %H:%M}",
        )
        for m in matrices
    ]
    choices.machines = [Choice(str(i), name) for i, name in names.items()]
    choices.suites = [
        Choice(name, f"{name}: {suite.title}") for name, suite in sorted(suites.items())
    ]
    measured = session.scalars(select(Result.sut).distinct()).all()
    choices.systems = [
        Choice(name, systems.style(name).title)
        for name in systems.order([*systems.declared, *measured])
    ]
    factor_names = sorted({*AGENT_FACTOR_NAMES, *(p for s in suites.values() for p in s.params)})
    choices.factors = [Choice(name, name.replace("_", " ")) for name in factor_names]
    seen: dict[str, None] = {}
    for params in session.scalars(select(Job.params).order_by(Job.id.desc()).limit(RECENT_JOBS)):
        for value in (params or {}).values():
            seen.setdefault(as_text(value), None)
    choices.factor_values = sorted(seen)[:200]
    return choices
