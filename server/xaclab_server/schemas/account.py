"""Bodies of the account calls of the user API: logins, users, API tokens."""

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from xaclab_server.core.security import MAX_PASSWORD, MAX_USERNAME

Role = Literal["viewer", "operator", "admin"]


class LoginIn(BaseModel):
    username: Annotated[str, Field(min_length=1, max_length=MAX_USERNAME)]
    password: Annotated[str, Field(min_length=1, max_length=MAX_PASSWORD)]


class Me(BaseModel):
    username: str | None
    role: str | None
    via: str
    csrf_token: str | None = None


class UserIn(BaseModel):
    username: Annotated[str, Field(min_length=1, max_length=MAX_USERNAME)]
    password: Annotated[str, Field(min_length=1, max_length=MAX_PASSWORD)]
    role: Role = "viewer"


class UserPatch(BaseModel):
    role: Role | None = None
    disabled: bool | None = None
    password: Annotated[str | None, Field(min_length=1, max_length=MAX_PASSWORD)] = None


class UserOut(BaseModel):
    id: int
    username: str
    role: str
    disabled: bool
    created_at: datetime
    last_login_at: datetime | None


class TokenIn(BaseModel):
    name: Annotated[str, Field(min_length=1, max_length=100)]


class TokenOut(BaseModel):
    id: int
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class TokenCreated(TokenOut):
    token: str  # shown once
