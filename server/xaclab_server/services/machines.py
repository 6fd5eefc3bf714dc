"""Registering machines and authenticating their agents by token.

A machine's ``fingerprint_hash`` is computed here from its fingerprint with
:func:`xaclab_contracts.fingerprint.fingerprint_hash` rather than taken from
the agent, so its identity never depends on what an agent claims; it is byte
for byte the agent's hash for the same fingerprint (the same function).

**Epochs.** A machine's history is cut into epochs, one per identity
fingerprint (:class:`~xaclab_server.models.MachineEpoch`): a new machine starts
epoch 1, and a registration whose identity hash differs from the current
epoch's starts the next one.  Results keep the epoch they were stored in, so a
kernel, disk or mount change never mixes silently into a series.
"""

import hashlib
import secrets
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from xaclab_contracts.fingerprint import fingerprint_hash

from xaclab_server.models import Machine, MachineEpoch
from xaclab_server.models.base import utcnow

TOKEN_PREFIX = "xa_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class RegistrationRefused(ValueError):
    """A registration without the registration token for a name an approved machine has."""


def register_machine(
    *, session: Session, name: str, fingerprint: dict[str, Any], trusted: bool = True
) -> tuple[Machine, str]:
    """Create or update the machine called ``name`` with a fresh token; return it and the token.

    The previous token of a re-registered machine stops working at once.
    ``trusted`` registrations (with the registration token) are approved at
    once; the others create a machine that waits for an admin's approval, and
    may not take over a name an approved machine already has.
    """
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    now = utcnow()
    for _attempt in range(2):
        machine = session.scalar(select(Machine).where(Machine.name == name))
        if machine is not None and machine.approved and not trusted:
            raise RegistrationRefused(
                f"A machine called {name!r} is already registered and approved; registering "
                "it again needs the registration token (or an admin's token rotation)."
            )
        identity = fingerprint_hash(fingerprint)
        new_epoch = machine is None or machine.fingerprint_hash != identity
        if machine is None:
            machine = Machine(name=name, created_at=now, approved=trusted, epoch=0)
            session.add(machine)
        elif trusted:
            machine.approved = True
        machine.fingerprint = fingerprint
        machine.fingerprint_hash = identity
        machine.token_hash = hash_token(token)
        machine.last_seen_at = now
        try:
            if new_epoch:
                machine.epoch += 1
                session.flush()
                _start_epoch(session, machine, machine.epoch, fingerprint, identity, now)
            session.commit()
        except IntegrityError:
            # Two registrations of a new name raced; the second updates the first's row.
            session.rollback()
            continue
        return machine, token
    raise RuntimeError(f"could not register machine {name!r}")


def _start_epoch(
    session: Session,
    machine: Machine,
    epoch: int,
    fingerprint: dict[str, Any],
    identity: str,
    now: datetime,
) -> None:
    session.add(
        MachineEpoch(
            machine_id=machine.id,
            epoch=epoch,
            fingerprint=fingerprint,
            fingerprint_hash=identity,
            started_at=now,
        )
    )


def epochs_of(*, session: Session, machine_id: int) -> list[MachineEpoch]:
    """A machine's epochs, oldest first."""
    return list(
        session.scalars(
            select(MachineEpoch)
            .where(MachineEpoch.machine_id == machine_id)
            .order_by(MachineEpoch.epoch)
        )
    )


def authenticate_agent(*, session: Session, token: str, touch_seconds: float = 0) -> Machine | None:
    """The machine whose current token this is, or None if unknown.

    ``last_seen_at`` is written only when it is at least ``touch_seconds``
    old: an idle agent re-polls every 25 s, and with hundreds of agents an
    UPDATE and a synced COMMIT per poll would be most of an idle server's
    work.  The caller picks a value well inside the online window, so a
    machine never looks offline because of it.  The transaction ends here
    either way, so a long poll holds no database connection.
    """
    machine = session.scalar(select(Machine).where(Machine.token_hash == hash_token(token)))
    if machine is not None:
        now = utcnow()
        if now - machine.last_seen_at >= timedelta(seconds=touch_seconds):
            machine.last_seen_at = now
    session.commit()
    return machine


def is_online(machine: Machine, *, now: datetime, window_seconds: int) -> bool:
    return now - machine.last_seen_at <= timedelta(seconds=window_seconds)


def approve_machine(*, session: Session, machine: Machine) -> Machine:
    machine.approved = True
    session.commit()
    return machine


def rotate_agent_token(*, session: Session, machine: Machine) -> str:
    """A fresh agent token for ``machine``; the old one stops working at once."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    machine.token_hash = hash_token(token)
    session.commit()
    return token
