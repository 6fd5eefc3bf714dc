"""User API: the audit log (admins only), filtered and paged by id, newest first."""

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query

from xaclab_server.api.deps import AdminUser, SessionDep
from xaclab_server.models import AuditEvent
from xaclab_server.schemas.audit import AuditEventOut, AuditPage
from xaclab_server.services import audit

router = APIRouter(prefix="/api/v1", tags=["accounts"])

UNPROCESSABLE = 422


def event_out(event: AuditEvent) -> AuditEventOut:
    return AuditEventOut(
        id=event.id,
        at=event.at,
        action=event.action,
        outcome=event.outcome,
        actor=event.actor,
        address=event.address,
        target=event.target,
        detail=event.detail,
    )


def event_filter(
    *,
    action: str | None,
    outcome: str | None,
    actor: str | None,
    address: str | None,
    since: datetime | None,
    until: datetime | None,
) -> audit.EventFilter:
    """The filter, or a 422 that names the values allowed."""
    if action is not None and action not in audit.ACTIONS:
        raise HTTPException(
            UNPROCESSABLE, f"action is one of {', '.join(audit.ACTIONS)}, not {action!r}."
        )
    if outcome is not None and outcome not in audit.OUTCOMES:
        raise HTTPException(
            UNPROCESSABLE, f"outcome is one of {', '.join(audit.OUTCOMES)}, not {outcome!r}."
        )
    for name, moment in (("since", since), ("until", until)):
        if moment is not None and moment.tzinfo is None:
            raise HTTPException(
                UNPROCESSABLE, f"{name} needs a time zone, such as 2026-11-24T10:00:00Z."
            )
    return audit.EventFilter(
        action=action, outcome=outcome, actor=actor, address=address, since=since, until=until
    )


@router.get("/audit")
def read_audit(
    session: SessionDep,
    _admin: AdminUser,
    action: Annotated[str | None, Query(max_length=64)] = None,
    outcome: Annotated[str | None, Query(max_length=16)] = None,
    actor: Annotated[str | None, Query(max_length=128)] = None,
    address: Annotated[str | None, Query(max_length=64)] = None,
    since: datetime | None = None,
    until: datetime | None = None,
    before: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
    limit: Annotated[int, Query(ge=1, le=audit.MAX_PAGE)] = 50,
) -> AuditPage:
    """Entries newest first: logins (ok, failed, throttled), logouts, API tokens made and
    revoked, users made and changed, machines registered and approved, agent tokens
    rotated.  Page with ``before`` = the previous page's ``next_before``."""
    where = event_filter(
        action=action, outcome=outcome, actor=actor, address=address, since=since, until=until
    )
    page = audit.find_events(session=session, where=where, before=before, limit=limit)
    return AuditPage(events=[event_out(e) for e in page.events], next_before=page.next_before)
