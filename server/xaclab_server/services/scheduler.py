"""Recurring run matrices: create schedules and fire the due ones.

:func:`fire_due_schedules` is safe to run in every server process at once:
on PostgreSQL it locks due rows with ``FOR UPDATE SKIP LOCKED`` and moves
``next_run_at`` forward in the transaction that queues the matrix, so a
firing happens in exactly one process; on SQLite (one process) the write
lock serialises it.  A schedule whose matrix no longer validates (a machine
was removed, a suite changed) is disabled rather than retried forever.
"""

import logging
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from xaclab_server.models import Schedule, User
from xaclab_server.models.base import utcnow
from xaclab_server.schemas.matrix import MatrixIn
from xaclab_server.schemas.schedule import ScheduleIn
from xaclab_server.services.cron import CronError, parse_cron
from xaclab_server.services.libxac_git import LibxacGit
from xaclab_server.services.matrices import check_matrix, queue_matrix
from xaclab_server.services.suites import ParamError, Suite

log = logging.getLogger("xaclab_server.scheduler")
MAX_PER_PASS = 100


def create_schedule(
    *,
    session: Session,
    suites: dict[str, Suite],
    body: ScheduleIn,
    user: User,
    git: LibxacGit | None = None,
) -> Schedule:
    """Validate the cron expression and the matrix now, so a bad schedule never fires.  A
    ``libxac_revision`` such as a branch is resolved each time the schedule fires."""
    cron = parse_cron(body.cron)
    check_matrix(session=session, suites=suites, spec=body.matrix, git=git)
    schedule = Schedule(
        name=body.name.strip(),
        cron=body.cron.strip(),
        spec=body.matrix.model_dump(mode="json"),
        enabled=body.enabled,
        next_run_at=cron.next_after(utcnow()),
        created_by_id=user.id,
    )
    session.add(schedule)
    session.commit()
    return schedule


def update_schedule(
    *, session: Session, schedule: Schedule, enabled: bool | None, cron: str | None
) -> Schedule:
    if cron is not None:
        schedule.next_run_at = parse_cron(cron).next_after(utcnow())
        schedule.cron = cron.strip()
    if enabled is not None:
        if enabled and not schedule.enabled:
            schedule.next_run_at = parse_cron(schedule.cron).next_after(utcnow())
        schedule.enabled = enabled
    session.commit()
    return schedule


def fire_due_schedules(
    *,
    session: Session,
    suites: dict[str, Suite],
    now: datetime | None = None,
    git: LibxacGit | None = None,
) -> list[int]:
    """Queue the matrix of every due schedule once; return the new matrices' ids."""
    now = now or utcnow()
    fired: list[int] = []
    # One schedule per transaction: queue_matrix commits, which releases the row lock.
    for _ in range(MAX_PER_PASS):
        schedule = session.scalars(
            select(Schedule)
            .where(Schedule.enabled.is_(True), Schedule.next_run_at <= now)
            .order_by(Schedule.next_run_at, Schedule.id)
            .limit(1)
            .with_for_update(skip_locked=True)
        ).first()
        if schedule is None:
            break
        schedule.last_run_at = now
        try:
            schedule.next_run_at = parse_cron(schedule.cron).next_after(now)
            spec = MatrixIn.model_validate(schedule.spec)
            matrix, _runs = queue_matrix(
                session=session,
                suites=suites,
                spec=spec,
                user_id=schedule.created_by_id,
                schedule_id=schedule.id,
                git=git,
            )
        except (CronError, ParamError, ValueError) as exc:
            log.warning("schedule %s disabled: %s", schedule.id, exc)
            schedule.enabled = False
            session.commit()
            continue
        fired.append(matrix.id)
    session.commit()
    return fired
