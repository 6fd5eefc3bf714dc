"""User API: machines."""

from fastapi import APIRouter
from sqlalchemy import select

from xaclab_server.api.deps import SessionDep, SettingsDep
from xaclab_server.models import Machine
from xaclab_server.models.base import utcnow
from xaclab_server.schemas.user import MachineOut
from xaclab_server.services.machines import is_online

router = APIRouter(prefix="/api/v1", tags=["user"])


@router.get("/machines")
def list_machines(session: SessionDep, settings: SettingsDep) -> list[MachineOut]:
    now = utcnow()
    return [
        MachineOut(
            id=m.id,
            name=m.name,
            fingerprint_hash=m.fingerprint_hash,
            last_seen_at=m.last_seen_at,
            online=is_online(m, now=now, window_seconds=settings.machine_online_seconds),
        )
        for m in session.scalars(select(Machine).order_by(Machine.name))
    ]
