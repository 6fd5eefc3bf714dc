"""Reproducing the thesis in one action: the matrices whose results fill every table of the
report, how long they will take on a machine, and queueing them.

:data:`PLAN` lists what docs/thesis-reproduction.md ("Getting a value into
every row") says to run, one matrix per set-up: both durabilities, the write
cache off where the thesis turned the drives' caches off (and on for C.12),
the search trees at the thesis's 250,000 keys and 1 and 2 processes.  Each
names the tables it fills; the tests hold every mapping of those tables
(contracts/thesis-figures.json) to a matrix whose job params agree with it.

The estimate of a job is the median time (claimed to finished) of this
machine's earlier jobs of the same suite, profile and params, else any
machine's; else, roughly, of jobs of the same suite and profile with other
params, scaled by the ratio of the key counts when both name one (the trees'
inserts take time in proportion to their number); else there is none, and
the page says which jobs have no estimate.
"""

import statistics
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from xaclab_server.models import Job, Machine, Matrix, Run
from xaclab_server.schemas.matrix import MatrixIn
from xaclab_server.services.matrices import check_matrix, expand, queue_matrix
from xaclab_server.services.pairs import canonical
from xaclab_server.services.suites import Suite

HISTORY_JOBS = 2000  # earlier jobs of one suite and profile looked at for an estimate
# What the whole plan took where it was last run in full (docs/thesis-reproduction.md), for a
# machine that has run none of its jobs yet: a guide, not this machine's estimate.
REFERENCE_RUN = (
    "the whole plan took 66 minutes on xaclab's development VM (2 cores, a virtio disk whose "
    "write cache only the kernel's view of could be switched; 2026-11-26): the durable "
    "search-tree jobs 18, 7 and 34 minutes, every other job under 2 minutes"
)


@dataclass(frozen=True, slots=True)
class PlannedMatrix:
    suite: str
    profile: str
    params: dict[str, Any]
    factors: dict[str, list[Any]]
    tables: tuple[str, ...]  # the thesis tables its results fill
    why: str

    def spec(self, machine_id: int) -> MatrixIn:
        return MatrixIn(
            machine_ids=[machine_id],
            suites=[self.suite],
            profiles=[self.profile],
            params=dict(self.params),
            factors={k: list(v) for k, v in self.factors.items()},
        )


TREES = {"tree": "all", "count": 250_000}
PLAN: tuple[PlannedMatrix, ...] = (
    PlannedMatrix(
        "page-touch",
        "full",
        {"durability": "nondurable"},
        {},
        ("4.2", "4.6"),
        "time per page at n = 1024 with and without advisory, and the fitted a and b",
    ),
    PlannedMatrix(
        "page-touch",
        "full",
        {"durability": "durable", "write_cache": "off"},
        {},
        ("4.7",),
        "durable transactions, with the drives' write caches off as in the thesis",
    ),
    PlannedMatrix(
        "storage",
        "full",
        {},
        {},
        ("4.3", "4.5", "4.6", "C.8"),
        "the floors: a fault's round trip, mmap, memcpy, first touch, checksums",
    ),
    PlannedMatrix(
        "storage",
        "full",
        {"write_cache": "off"},
        {},
        ("4.8",),
        "fsync of a 10,000-page file with the write cache off",
    ),
    PlannedMatrix(
        "concurrency",
        "full",
        {"durability": "nondurable"},
        {},
        ("4.9", "C.9"),
        "tests A, B and C on 1 and 2 processes",
    ),
    PlannedMatrix(
        "concurrency",
        "full",
        {"durability": "durable", "write_cache": "off"},
        {},
        ("4.10", "C.10"),
        "the same, durable, write cache off",
    ),
    PlannedMatrix(
        "search-tree",
        "full",
        {**TREES, "durability": "nondurable"},
        {"procs": [1, 2]},
        ("C.11",),
        "250,000 inserts into every LIBXAC tree and Berkeley DB's nondurable modes",
    ),
    PlannedMatrix(
        "search-tree",
        "full",
        {**TREES, "durability": "durable", "write_cache": "off"},
        {"procs": [1, 2]},
        ("5.5", "5.6"),
        "the same, durable, write cache off: one sync per commit",
    ),
    PlannedMatrix(
        "search-tree",
        "full",
        {**TREES, "durability": "durable", "procs": 1, "write_cache": "on"},
        {},
        ("C.12",),
        "durable with the write cache on, one process",
    ),
)


@dataclass(frozen=True, slots=True)
class JobEstimate:
    params: dict[str, Any]
    seconds: float | None
    basis: str  # where the estimate comes from, in words


@dataclass(slots=True)
class MatrixEstimate:
    planned: PlannedMatrix
    jobs: list[JobEstimate] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return sum(j.seconds or 0.0 for j in self.jobs)

    @property
    def unknown(self) -> int:
        return sum(j.seconds is None for j in self.jobs)


@dataclass(slots=True)
class PlanEstimate:
    machine: Machine
    matrices: list[MatrixEstimate]

    @property
    def jobs(self) -> int:
        return sum(len(m.jobs) for m in self.matrices)

    @property
    def seconds(self) -> float:
        return sum(m.seconds for m in self.matrices)

    @property
    def unknown(self) -> int:
        return sum(m.unknown for m in self.matrices)

    @property
    def reference(self) -> str:
        return REFERENCE_RUN


Seen = list[tuple[int, dict[str, Any], float]]


def _durations(session: Session, suite: str, profile: str) -> Seen:
    """(machine, params, seconds) of the newest succeeded jobs of suite and profile."""
    rows = session.execute(
        select(Job.machine_id, Job.params, Job.claimed_at, Job.finished_at)
        .where(
            Job.suite == suite,
            Job.profile == profile,
            Job.status == "succeeded",
            Job.claimed_at.is_not(None),
            Job.finished_at.is_not(None),
        )
        .order_by(Job.id.desc())
        .limit(HISTORY_JOBS)
    ).all()
    return [
        (machine_id, params or {}, (finished - claimed).total_seconds())
        for machine_id, params, claimed, finished in rows
        if finished is not None and claimed is not None
    ]


def _scaled(params: dict[str, Any], earlier: dict[str, Any], seconds: float) -> float:
    count, then = params.get("count"), earlier.get("count")
    if isinstance(count, int) and isinstance(then, int) and then > 0:
        return seconds * count / then
    return seconds


def _estimate(params: dict[str, Any], machine_id: int, seen: Seen) -> JobEstimate:
    key = canonical(params)
    for where, mine in (("here", True), ("on other machines", False)):
        same = [s for m, p, s in seen if canonical(p) == key and (m == machine_id) == mine]
        if same:
            return JobEstimate(
                params, statistics.median(same), f"{len(same)} earlier job(s) {where}"
            )
    for where, mine in (("here", True), ("on other machines", False)):
        other = [_scaled(params, p, s) for m, p, s in seen if (m == machine_id) == mine]
        if other:
            return JobEstimate(
                params,
                statistics.median(other),
                f"rough: {len(other)} earlier job(s) {where} with other parameters",
            )
    return JobEstimate(params, None, "no earlier job of this suite and profile")


def estimate_plan(*, session: Session, machine: Machine) -> PlanEstimate:
    cache: dict[tuple[str, str], Seen] = {}
    matrices = []
    for planned in PLAN:
        seen = cache.setdefault(
            (planned.suite, planned.profile), _durations(session, planned.suite, planned.profile)
        )
        spec = planned.spec(machine.id)
        estimate = MatrixEstimate(planned)
        for combo in expand(spec):
            estimate.jobs.append(_estimate({**spec.params, **combo}, machine.id, seen))
        matrices.append(estimate)
    return PlanEstimate(machine, matrices)


def queue_plan(
    *, session: Session, suites: dict[str, Suite], machine_id: int, user_id: int | None
) -> list[tuple[Matrix, list[Run]]]:
    """Queue every matrix of :data:`PLAN` on the machine.  Each is checked as any matrix
    is (ParamError with a sentence); all are checked before any is stored."""
    specs = [planned.spec(machine_id) for planned in PLAN]
    for spec in specs:
        check_matrix(session=session, suites=suites, spec=spec)
    return [
        queue_matrix(session=session, suites=suites, spec=spec, user_id=user_id) for spec in specs
    ]
