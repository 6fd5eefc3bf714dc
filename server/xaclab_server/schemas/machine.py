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


class AgentTokenOut(BaseModel):
    machine_id: int
    agent_token: str  # shown once
