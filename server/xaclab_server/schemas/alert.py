"""Bodies of the user API's alert calls (docs/change-points.md)."""

from typing import Annotated

from pydantic import BaseModel, Field


class AlertNote(BaseModel):
    note: Annotated[str, Field(max_length=500)] = ""


class WatchSettingsIn(BaseModel):
    webhook_url: Annotated[str | None, Field(max_length=2000)] = None
    auto_bisect: bool = False


class WatchSettingsOut(BaseModel):
    webhook_url: str | None
    auto_bisect: bool
