"""Dependencies shared by the routes, as ``Annotated`` aliases.

User authentication will arrive as a ``CurrentUser`` alias here; the user
routes take no user yet because the server binds to loopback by default.
"""

from typing import Annotated

from fastapi import Depends, HTTPException, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from jsonschema import Draft202012Validator
from sqlalchemy.orm import Session, sessionmaker

from xaclab_server.core.config import Settings
from xaclab_server.core.db import get_db
from xaclab_server.models import Machine
from xaclab_server.services.machines import authenticate_agent
from xaclab_server.services.notifier import JobNotifier
from xaclab_server.services.suites import Suite

SessionDep = Annotated[Session, Depends(get_db)]


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_sessionmaker(request: Request) -> sessionmaker[Session]:
    factory: sessionmaker[Session] = request.app.state.sessionmaker
    return factory


def get_suites(request: Request) -> dict[str, Suite]:
    suites: dict[str, Suite] = request.app.state.suites
    return suites


def get_result_validator(request: Request) -> Draft202012Validator:
    validator: Draft202012Validator = request.app.state.result_validator
    return validator


def get_notifier(request: Request) -> JobNotifier:
    notifier: JobNotifier = request.app.state.notifier
    return notifier


SettingsDep = Annotated[Settings, Depends(get_settings)]
SessionFactoryDep = Annotated[sessionmaker[Session], Depends(get_sessionmaker)]
SuitesDep = Annotated[dict[str, Suite], Depends(get_suites)]
ResultValidatorDep = Annotated[Draft202012Validator, Depends(get_result_validator)]
NotifierDep = Annotated[JobNotifier, Depends(get_notifier)]

_bearer = HTTPBearer(auto_error=False, description="The agent token from POST /register.")


def get_current_agent(
    session: SessionDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Machine:
    if credentials is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "This call needs an agent token: send 'Authorization: Bearer <agent_token>'.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    machine = authenticate_agent(session=session, token=credentials.credentials)
    if machine is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "The agent token is not known (or was replaced by a newer registration); "
            "register the agent again.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return machine


CurrentAgent = Annotated[Machine, Depends(get_current_agent)]
