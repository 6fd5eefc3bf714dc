"""What the watch can see: per machine, how many of its series would show a change of a
given size (5 %), from the noise the detector last measured in each
(``series.noise``, services/sensitivity.py), and the series that could miss it.

Only each machine's current epoch counts: older epochs' series get no new points.
"""

from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from xaclab_server.models import Machine, Series
from xaclab_server.services.edivisive import Options
from xaclab_server.services.sensitivity import smallest_step
from xaclab_server.services.series import describe

STEP = 0.05  # the change a lab most wants to see (issue K's accuracy target)
AFTER = 10  # runs after the change
NOISIEST = 5  # the series named on the page, per machine


@dataclass(frozen=True, slots=True)
class Blind:
    key: str
    title: str
    noise: float
    smallest: float  # the smallest step the detector finds in it, AFTER runs on


@dataclass
class Coverage:
    machine_id: int
    machine: str
    epoch: int
    series: int = 0
    not_judged: int = 0  # too few points yet, or a median of 0
    shows: int = 0  # judged, and a STEP change shows within AFTER runs
    blind: list[Blind] = field(default_factory=list)  # judged, and it may not


def watch_coverage(
    *, session: Session, options: Options, machine_id: int | None = None
) -> list[Coverage]:
    """Machines by name, each with its current epoch's series counted; ``blind`` holds
    the NOISIEST series that may miss a STEP change, the largest smallest step first."""
    query = (
        select(Series, Machine.name)
        .join(Machine, Machine.id == Series.machine_id)
        .where(Series.epoch == Machine.epoch)
        .order_by(Machine.name, Machine.id, Series.id)
    )
    if machine_id is not None:
        query = query.where(Series.machine_id == machine_id)
    found: dict[int, Coverage] = {}
    for series, name in session.execute(query):
        coverage = found.setdefault(
            series.machine_id, Coverage(series.machine_id, name, series.epoch)
        )
        coverage.series += 1
        if series.noise is None:
            coverage.not_judged += 1
            continue
        smallest = smallest_step(series.noise, AFTER, options)
        if smallest <= STEP:
            coverage.shows += 1
        else:
            coverage.blind.append(Blind(series.key, describe(series, name), series.noise, smallest))
    for coverage in found.values():
        coverage.blind.sort(key=lambda b: (-b.smallest, b.key))
    return list(found.values())
