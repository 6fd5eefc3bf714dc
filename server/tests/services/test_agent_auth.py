"""Agent authentication writes last_seen_at at most once per touch interval."""

from datetime import timedelta
from pathlib import Path

from xaclab_server.core.db import make_engine, make_sessionmaker
from xaclab_server.core.migrations import upgrade_head
from xaclab_server.models import Machine
from xaclab_server.models.base import utcnow
from xaclab_server.services.machines import authenticate_agent, hash_token


def test_last_seen_is_written_only_when_stale(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/auth.sqlite3"
    upgrade_head(url)
    factory = make_sessionmaker(make_engine(url))
    fresh = utcnow() - timedelta(seconds=5)
    with factory() as session:
        session.add(
            Machine(
                name="lab-a",
                fingerprint={},
                fingerprint_hash="x",
                token_hash=hash_token("xa_secret"),
                last_seen_at=fresh,
            )
        )
        session.commit()

    with factory() as session:
        machine = authenticate_agent(session=session, token="xa_secret", touch_seconds=30)
        assert machine is not None and machine.name == "lab-a"
        assert not session.in_transaction()  # no connection held through a long poll
    with factory() as session:
        stored = session.query(Machine).one().last_seen_at
        assert abs((stored - fresh).total_seconds()) < 0.001  # 5 s old: not rewritten

    with factory() as session:
        authenticate_agent(session=session, token="xa_secret", touch_seconds=1)
    with factory() as session:
        assert session.query(Machine).one().last_seen_at > fresh + timedelta(seconds=4)

    with factory() as session:
        assert authenticate_agent(session=session, token="xa_wrong", touch_seconds=1) is None
