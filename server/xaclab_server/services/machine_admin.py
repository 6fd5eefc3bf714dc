"""An admin's actions on a machine, as the API and the machines page both take them: audited."""

from datetime import datetime

from sqlalchemy.orm import Session

from xaclab_server.models import Machine
from xaclab_server.services import audit
from xaclab_server.services.audit import Actor
from xaclab_server.services.machines import approve_machine, rotate_agent_token


def approve(*, session: Session, machine: Machine, actor: Actor, now: datetime) -> Machine:
    """Let a machine that registered without the registration token claim work."""
    approve_machine(session=session, machine=machine)
    audit.record(session, at=now, actor=actor, action="machine.approve", target=machine.name)
    session.commit()
    return machine


def rotate_token(*, session: Session, machine: Machine, actor: Actor, now: datetime) -> str:
    """A fresh agent token for ``machine`` (the old one stops working at once)."""
    token = rotate_agent_token(session=session, machine=machine)
    audit.record(session, at=now, actor=actor, action="machine.rotate_token", target=machine.name)
    session.commit()
    return token
