"""The audit page (admins only): the audit log newest first, filtered, a page at a time."""

from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import HTMLResponse, Response

from xaclab_server.api.deps import SessionDep
from xaclab_server.core import access
from xaclab_server.core.access import RoleTooLow
from xaclab_server.services import audit
from xaclab_server.ui.guards import PageUser, page_router
from xaclab_server.ui.rendering import refused, render

router = page_router()

PAGE = 50
FILTERS = ("action", "outcome", "actor", "address")


@router.get("/audit", response_class=HTMLResponse)
def audit_page(request: Request, session: SessionDep, user: PageUser) -> Response:
    try:
        access.check_role(user, "admin")
    except RoleTooLow:
        return refused(request, "Only admins read the audit log.")
    # Filters come as typed or picked; an unknown action or outcome is said, not ignored.
    chosen = {name: request.query_params.get(name, "").strip()[:128] for name in FILTERS}
    error = None
    if chosen["action"] and chosen["action"] not in audit.ACTIONS:
        error = f"There is no action {chosen['action']!r}; pick one from the list."
    if chosen["outcome"] and chosen["outcome"] not in audit.OUTCOMES:
        error = f"There is no outcome {chosen['outcome']!r}; pick one from the list."
    before_text = request.query_params.get("before", "")
    before = int(before_text) if before_text.isdigit() and len(before_text) < 10 else None
    page = audit.EventPage(events=[], next_before=None)
    if error is None:
        where = audit.EventFilter(
            action=chosen["action"] or None,
            outcome=chosen["outcome"] or None,
            actor=chosen["actor"] or None,
            address=chosen["address"] or None,
        )
        page = audit.find_events(session=session, where=where, before=before, limit=PAGE)
    kept = {name: value for name, value in chosen.items() if value}
    older = (
        "/audit?" + urlencode({**kept, "before": page.next_before})
        if page.next_before is not None
        else None
    )
    return render(
        request,
        "audit.html",
        {
            "events": page.events,
            "chosen": chosen,
            "actions": audit.ACTIONS,
            "outcomes": audit.OUTCOMES,
            "error": error,
            "older": older,
            "newest": "/audit?" + urlencode(kept) if before is not None else None,
        },
        422 if error else 200,
    )
