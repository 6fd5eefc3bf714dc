"""Bodies of the user API's machine calls."""

from datetime import datetime

from pydantic import BaseModel


class MachineOut(BaseModel):
    id: int
    name: str
    fingerprint_hash: str
    last_seen_at: datetime
    online: bool
    approved: bool
    epoch: int  # the current epoch: a new one starts when the identity fingerprint changes


class EpochOut(BaseModel):
    """One stretch of a machine's history under one identity fingerprint (docs/validity.md)."""

    epoch: int
    started_at: datetime
    fingerprint_hash: str
    changed: list[str]  # identity fields that differ from the previous epoch
    results: int


class AgentTokenOut(BaseModel):
    machine_id: int
    agent_token: str  # shown once
