"""Bodies of the user API's baseline calls (docs/server.md, "Comparisons")."""

from datetime import datetime

from pydantic import BaseModel


class BaselineIn(BaseModel):
    run_id: int


class BaselineOut(BaseModel):
    machine_id: int
    suite: str
    run_id: int
    set_by_id: int | None
    set_at: datetime
