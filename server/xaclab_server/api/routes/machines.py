"""User API: machines and their epochs, and the admin's actions on them (approve, rotate the
agent token)."""

from fastapi import APIRouter, HTTPException, Request, status
from sqlalchemy import select
from sqlalchemy.orm import Session

from xaclab_server.api.deps import AdminUser, ClockDep, SessionDep, SettingsDep, actor_of
from xaclab_server.core.config import Settings
from xaclab_server.models import Machine
from xaclab_server.models.base import utcnow
from xaclab_server.schemas.machine import AgentTokenOut, EpochOut, MachineOut
from xaclab_server.services import machine_admin
from xaclab_server.services.epochs import epochs_with_changes
from xaclab_server.services.machines import is_online

router = APIRouter(prefix="/api/v1", tags=["user"])


def machine_out(machine: Machine, settings: Settings) -> MachineOut:
    return MachineOut(
        id=machine.id,
        name=machine.name,
        fingerprint_hash=machine.fingerprint_hash,
        last_seen_at=machine.last_seen_at,
        online=is_online(machine, now=utcnow(), window_seconds=settings.machine_online_seconds),
        approved=machine.approved,
        epoch=machine.epoch,
    )


def get_machine(session: Session, machine_id: int) -> Machine:
    machine = session.get(Machine, machine_id)
    if machine is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"Machine {machine_id} does not exist.")
    return machine


@router.get("/machines")
def list_machines(session: SessionDep, settings: SettingsDep) -> list[MachineOut]:
    return [
        machine_out(m, settings) for m in session.scalars(select(Machine).order_by(Machine.name))
    ]


@router.get("/machines/{machine_id}/epochs")
def list_epochs(machine_id: int, session: SessionDep) -> list[EpochOut]:
    """The machine's epochs, oldest first, each with the identity fields that changed."""
    get_machine(session, machine_id)
    return epochs_with_changes(session=session, machine_id=machine_id)


@router.post("/machines/{machine_id}/approve")
def approve(
    machine_id: int,
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    clock: ClockDep,
    admin: AdminUser,
) -> MachineOut:
    """Let a machine that registered without the registration token claim work."""
    machine = machine_admin.approve(
        session=session,
        machine=get_machine(session, machine_id),
        actor=actor_of(admin, request),
        now=clock(),
    )
    return machine_out(machine, settings)


@router.post("/machines/{machine_id}/rotate-token")
def rotate_token(
    machine_id: int, request: Request, session: SessionDep, clock: ClockDep, admin: AdminUser
) -> AgentTokenOut:
    """A fresh agent token (shown once); the old one stops working at once."""
    machine = get_machine(session, machine_id)
    token = machine_admin.rotate_token(
        session=session, machine=machine, actor=actor_of(admin, request), now=clock()
    )
    return AgentTokenOut(machine_id=machine.id, agent_token=token)
