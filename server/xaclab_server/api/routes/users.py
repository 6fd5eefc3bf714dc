"""User API: users (admins only) and each user's own API tokens."""

from fastapi import APIRouter, HTTPException, Request, status
from sqlalchemy import select

from xaclab_server.api.deps import AdminUser, ClockDep, CurrentUser, SessionDep, actor_of
from xaclab_server.models import ApiToken, User
from xaclab_server.schemas.account import (
    TokenCreated,
    TokenIn,
    TokenOut,
    UserIn,
    UserOut,
    UserPatch,
)
from xaclab_server.services import accounts

router = APIRouter(prefix="/api/v1", tags=["accounts"])


def user_out(user: User) -> UserOut:
    return UserOut(
        id=user.id,
        username=user.username,
        role=user.role,
        disabled=user.disabled,
        created_at=user.created_at,
        last_login_at=user.last_login_at,
    )


def token_out(token: ApiToken) -> TokenOut:
    return TokenOut(
        id=token.id,
        name=token.name,
        prefix=token.prefix,
        created_at=token.created_at,
        last_used_at=token.last_used_at,
        revoked_at=token.revoked_at,
    )


@router.get("/users")
def list_users(session: SessionDep, _admin: AdminUser) -> list[UserOut]:
    return [user_out(u) for u in session.scalars(select(User).order_by(User.username))]


@router.post("/users", status_code=status.HTTP_201_CREATED)
def create_user(
    body: UserIn, request: Request, session: SessionDep, clock: ClockDep, admin: AdminUser
) -> UserOut:
    try:
        user = accounts.create_user(
            session=session,
            username=body.username,
            password=body.password,
            role=body.role,
            actor=actor_of(admin, request),
            now=clock(),
        )
    except accounts.AccountError as exc:
        raise HTTPException(422, str(exc)) from exc
    return user_out(user)


@router.patch("/users/{user_id}")
def update_user(
    user_id: int,
    body: UserPatch,
    request: Request,
    session: SessionDep,
    clock: ClockDep,
    admin: AdminUser,
) -> UserOut:
    """Change a user; a new password or role, or disabling, ends the user's sessions and
    revokes the user's API tokens."""
    user = session.get(User, user_id)
    if user is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"User {user_id} does not exist.")
    try:
        accounts.update_user(
            session=session,
            user=user,
            actor=actor_of(admin, request),
            now=clock(),
            role=body.role,
            disabled=body.disabled,
            password=body.password,
        )
    except accounts.AccountError as exc:
        raise HTTPException(422, str(exc)) from exc
    return user_out(user)


@router.get("/tokens")
def list_tokens(session: SessionDep, user: CurrentUser) -> list[TokenOut]:
    return [token_out(t) for t in accounts.list_api_tokens(session=session, user=user)]


@router.post("/tokens", status_code=status.HTTP_201_CREATED)
def create_token(
    body: TokenIn, request: Request, session: SessionDep, clock: ClockDep, user: CurrentUser
) -> TokenCreated:
    """A new API token for the caller; the reply is the only time the token is shown."""
    try:
        row, token = accounts.create_api_token(
            session=session, user=user, name=body.name, actor=actor_of(user, request), now=clock()
        )
    except accounts.AccountError as exc:
        raise HTTPException(422, str(exc)) from exc
    return TokenCreated(**token_out(row).model_dump(), token=token)


@router.delete("/tokens/{token_id}")
def revoke_token(
    token_id: int, request: Request, session: SessionDep, clock: ClockDep, user: CurrentUser
) -> TokenOut:
    try:
        row = accounts.revoke_api_token(
            session=session,
            user=user,
            token_id=token_id,
            actor=actor_of(user, request),
            now=clock(),
        )
    except accounts.AccountError as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from exc
    return token_out(row)
