"""The audit log as the user API gives it: entries newest first, a page at a time."""

from datetime import datetime
from typing import Any

from pydantic import BaseModel


class AuditEventOut(BaseModel):
    id: int
    at: datetime
    action: str
    outcome: str
    actor: str
    address: str | None
    target: str | None
    detail: dict[str, Any]


class AuditPage(BaseModel):
    events: list[AuditEventOut]
    # Pass as ``before`` for the next, older page; null on the last page.
    next_before: int | None
