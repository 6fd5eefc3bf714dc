"""An agent's registration: the registration token checked, throttled and audited.

A registration that carries a registration token is counted under its
client address before the token is compared (``services/throttle.py``), so
wrong tokens are throttled exactly like wrong passwords; one without a
token guesses nothing and waits for an admin's approval instead.  Every
outcome goes to the audit log as ``machine.register`` (never the token).
"""

import hmac
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from xaclab_server.models import Machine
from xaclab_server.services import audit
from xaclab_server.services.audit import Actor
from xaclab_server.services.machines import RegistrationRefused, register_machine
from xaclab_server.services.throttle import Counted, Throttle, Throttled

__all__ = ["Registration", "Throttled", "WrongToken", "register"]


class WrongToken(Exception):
    """The registration token is not the server's."""


@dataclass(frozen=True, slots=True)
class Registration:
    name: str
    fingerprint: dict[str, Any]
    token: str | None
    address: str


def register(
    *, session: Session, throttle: Throttle, expected_token: str, registration: Registration
) -> tuple[Machine, str]:
    """The machine and its fresh agent token, or :class:`WrongToken` / :class:`Throttled`
    (or ``RegistrationRefused`` for a pending name an approved machine has)."""
    actor = Actor(name=f"agent {registration.name}", address=registration.address)
    trusted = bool(registration.token)
    if trusted:
        counted = _count(session, throttle, actor, registration)
        given = (registration.token or "").encode("utf-8")
        if not hmac.compare_digest(given, expected_token.encode("utf-8")):
            detail = {"reason": "wrong registration token", **counted.block_facts()}
            _record(session, throttle, actor, registration, outcome="failed", detail=detail)
            raise WrongToken()
        throttle.succeeded(session, counted, clear=[])
    try:
        machine, token = register_machine(
            session=session,
            name=registration.name,
            fingerprint=registration.fingerprint,
            trusted=trusted,
        )
    except RegistrationRefused:
        reason = {"reason": "an approved machine has the name; no registration token"}
        _record(session, throttle, actor, registration, outcome="failed", detail=reason)
        raise
    _record(
        session, throttle, actor, registration, outcome="ok", detail={"approved": machine.approved}
    )
    return machine, token


def _count(
    session: Session, throttle: Throttle, actor: Actor, registration: Registration
) -> Counted:
    try:
        return throttle.count(session, throttle.registration_keys(address=registration.address))
    except Throttled as refusal:
        if refusal.first_refusal:
            _record(
                session,
                throttle,
                actor,
                registration,
                outcome="throttled",
                detail={"retry_after_seconds": refusal.retry_after},
            )
        raise


def _record(
    session: Session,
    throttle: Throttle,
    actor: Actor,
    registration: Registration,
    *,
    outcome: str,
    detail: dict[str, Any],
) -> None:
    audit.record(
        session,
        at=throttle.clock(),
        actor=actor,
        action="machine.register",
        outcome=outcome,
        target=registration.name,
        detail=detail,
    )
    session.commit()
