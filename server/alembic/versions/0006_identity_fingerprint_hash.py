"""machines.fingerprint_hash becomes the identity hash of docs/fingerprint.md.

Revision 0001 stored a SHA-256 of the whole fingerprint, host name and
library build included, so renaming or rebuilding a machine changed it.  This
recomputes every machine's hash over the identity fields only, with the
function registrations use from now on (``sha256:<hex>``, the same value the
agent computes).  Downgrading keeps the new values: they are still text, and
nothing reads the old form.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from xaclab_contracts.fingerprint import fingerprint_hash

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    bind = op.get_bind()
    machines = sa.table(
        "machines",
        sa.column("id", sa.Integer),
        sa.column("fingerprint", sa.JSON),
        sa.column("fingerprint_hash", sa.Text),
    )
    for machine_id, fingerprint in bind.execute(sa.select(machines.c.id, machines.c.fingerprint)):
        loaded: Any = json.loads(fingerprint) if isinstance(fingerprint, str) else fingerprint
        bind.execute(
            machines.update()
            .where(machines.c.id == machine_id)
            .values(fingerprint_hash=fingerprint_hash(loaded if isinstance(loaded, dict) else {}))
        )


def downgrade() -> None:
    pass
