"""The audit log: who did what to accounts, tokens and machines, from where, and how it ended.

:func:`record` adds an entry to the caller's transaction; once that
transaction commits, the entry is also written as one structured log line
(logger ``xaclab_server.audit``, its fields prefixed ``audit_``), so a
rolled-back change leaves neither.  Callers pass facts, never secrets: a
token is named by its id and name, a user by name, a machine by name, a
failed login by the account tried (``unknown user`` when no account has
that name: such a name is often a password typed into the wrong field).
:func:`find_events` reads the log newest first, filtered, a page at a time.
"""

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import event, select
from sqlalchemy.orm import Session

from xaclab_server.models import AuditEvent, User

log = logging.getLogger("xaclab_server.audit")

# action: what the page calls it
ACTIONS = {
    "login": "log in",
    "logout": "log out",
    "token.create": "API token made",
    "token.revoke": "API token revoked",
    "user.create": "user made",
    "user.update": "user changed",
    "machine.register": "machine registered",
    "machine.approve": "machine approved",
    "machine.rotate_token": "agent token rotated",
}
OUTCOMES = ("ok", "failed", "throttled")
UNKNOWN_USER = "unknown user"
MAX_PAGE = 500

_PENDING = "xaclab_audit_pending"


@dataclass(frozen=True, slots=True)
class Actor:
    """Who acts: a user (by id and name), an agent, the command line; and from where."""

    name: str
    address: str | None
    user_id: int | None = None

    @classmethod
    def of_user(cls, user: User, address: str | None) -> "Actor":
        return cls(name=user.username, address=address, user_id=user.id)


COMMAND_LINE = Actor(name="command line", address="local")


def record(
    session: Session,
    *,
    at: datetime,
    actor: Actor,
    action: str,
    outcome: str = "ok",
    target: str | None = None,
    detail: dict[str, Any] | None = None,
) -> AuditEvent:
    """Add an entry to ``session``'s transaction; it is logged when that commits."""
    if action not in ACTIONS or outcome not in OUTCOMES:
        raise ValueError(f"unknown audit action {action!r} or outcome {outcome!r}")
    entry = AuditEvent(
        at=at,
        action=action,
        outcome=outcome,
        actor_id=actor.user_id,
        actor=actor.name,
        address=actor.address,
        target=target,
        detail=dict(detail or {}),
    )
    session.add(entry)
    line = {
        "audit_at": at.isoformat(),
        "audit_action": action,
        "audit_outcome": outcome,
        "audit_actor": actor.name,
        "audit_address": actor.address or "",
        "audit_target": target or "",
        **{f"audit_{key}": value for key, value in sorted(entry.detail.items())},
    }
    session.info.setdefault(_PENDING, []).append(line)
    return entry


@event.listens_for(Session, "after_commit")
def _log_committed(session: Session) -> None:
    for line in session.info.pop(_PENDING, []):
        log.info(
            "audit: %s %s by %s from %s",
            line["audit_action"],
            line["audit_outcome"],
            line["audit_actor"],
            line["audit_address"] or "-",
            extra=line,
        )


@event.listens_for(Session, "after_rollback")
def _forget_rolled_back(session: Session) -> None:
    session.info.pop(_PENDING, None)


@dataclass(frozen=True, slots=True)
class EventFilter:
    """What :func:`find_events` keeps; None keeps everything."""

    action: str | None = None
    outcome: str | None = None
    actor: str | None = None
    address: str | None = None
    since: datetime | None = None
    until: datetime | None = None


@dataclass(frozen=True, slots=True)
class EventPage:
    events: list[AuditEvent]
    # The ``before`` of the next (older) page; None on the last page.
    next_before: int | None


def find_events(
    *, session: Session, where: EventFilter, before: int | None = None, limit: int = 50
) -> EventPage:
    """Entries newest first, those older than id ``before`` only; pages by id, so an
    entry added while someone pages never shifts the pages they have not read."""
    limit = max(1, min(limit, MAX_PAGE))
    query = select(AuditEvent)
    if where.action is not None:
        query = query.where(AuditEvent.action == where.action)
    if where.outcome is not None:
        query = query.where(AuditEvent.outcome == where.outcome)
    if where.actor is not None:
        query = query.where(AuditEvent.actor == where.actor)
    if where.address is not None:
        query = query.where(AuditEvent.address == where.address)
    if where.since is not None:
        query = query.where(AuditEvent.at >= where.since)
    if where.until is not None:
        query = query.where(AuditEvent.at < where.until)
    if before is not None:
        query = query.where(AuditEvent.id < before)
    rows = list(session.scalars(query.order_by(AuditEvent.id.desc()).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    return EventPage(events=rows, next_before=rows[-1].id if more else None)
