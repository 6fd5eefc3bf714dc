"""A machine's epochs as pages and the API list them: when each started, what changed,
how many results it holds (docs/validity.md, "Comparability")."""

from sqlalchemy import func, select
from sqlalchemy.orm import Session
from xaclab_contracts.fingerprint import identity_differences

from xaclab_server.models import Result
from xaclab_server.schemas.machine import EpochOut
from xaclab_server.services.machines import epochs_of


def epochs_with_changes(*, session: Session, machine_id: int) -> list[EpochOut]:
    """The machine's epochs, oldest first, each with the identity fields that changed."""
    counts: dict[int, int] = {}
    for epoch_number, count in session.execute(
        select(Result.epoch, func.count())
        .where(Result.machine_id == machine_id)
        .group_by(Result.epoch)
    ):
        counts[epoch_number] = count
    out: list[EpochOut] = []
    previous = None
    for epoch in epochs_of(session=session, machine_id=machine_id):
        changed: list[str] = (
            [] if previous is None else identity_differences(previous, epoch.fingerprint)
        )
        out.append(
            EpochOut(
                epoch=epoch.epoch,
                started_at=epoch.started_at,
                fingerprint_hash=epoch.fingerprint_hash,
                changed=changed,
                results=counts.get(epoch.epoch, 0),
            )
        )
        previous = epoch.fingerprint
    return out
