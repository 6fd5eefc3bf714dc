"""Concurrent claimers on PostgreSQL (as several server processes would be) never share a job."""

import threading
from collections import Counter

from sqlalchemy import delete

from tests.conftest import PgDatabases
from xaclab_server.core.db import make_engine, make_sessionmaker
from xaclab_server.core.migrations import upgrade_head
from xaclab_server.models import Job, Machine, Run
from xaclab_server.services.jobs import claim_queued_job, create_run

JOBS = 60
CLAIMERS = 6


def test_concurrent_claimers_never_get_the_same_job(pg_databases: PgDatabases) -> None:
    url = pg_databases.create()
    upgrade_head(url)
    engines = [make_engine(url) for _ in range(CLAIMERS)]  # one pool per "server process"
    setup = make_sessionmaker(engines[0])
    with setup() as session:
        machine = Machine(name="lab-c", fingerprint={}, fingerprint_hash="x", token_hash="y")
        session.add(machine)
        session.commit()
        for _ in range(JOBS):
            create_run(
                session=session, machine=machine, suite="page-touch", profile="quick", params={}
            )
        machine_id = machine.id

    claimed: list[list[int]] = [[] for _ in range(CLAIMERS)]
    barrier = threading.Barrier(CLAIMERS)

    def claimer(index: int) -> None:
        factory = make_sessionmaker(engines[index])
        barrier.wait()
        while True:
            with factory() as session:
                job = claim_queued_job(session=session, machine_id=machine_id)
            if job is None:
                return
            claimed[index].append(job.id)

    threads = [threading.Thread(target=claimer, args=(i,)) for i in range(CLAIMERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    every = [job_id for jobs in claimed for job_id in jobs]
    duplicates = [job_id for job_id, count in Counter(every).items() if count > 1]
    assert duplicates == []
    assert len(every) == JOBS
    assert sum(1 for jobs in claimed if jobs) > 1, "the claimers did not overlap"
    with setup() as session:
        statuses = {job.status for job in session.query(Job)}
        assert statuses == {"running"}
        assert {run.status for run in session.query(Run)} == {"running"}
        for model in (Job, Run, Machine):
            session.execute(delete(model))
        session.commit()
    for engine in engines:
        engine.dispose()


def test_sqlite_claimers_never_get_the_same_job(tmp_path: object) -> None:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    url = f"sqlite:///{tmp_path / 'claims.sqlite3'}"
    upgrade_head(url)
    engine = make_engine(url)
    factory = make_sessionmaker(engine)
    with factory() as session:
        machine = Machine(name="lab-s", fingerprint={}, fingerprint_hash="x", token_hash="y")
        session.add(machine)
        session.commit()
        for _ in range(20):
            create_run(
                session=session, machine=machine, suite="page-touch", profile="quick", params={}
            )
        machine_id = machine.id
    claimed: list[int] = []
    lock = threading.Lock()

    def claimer() -> None:
        while True:
            with factory() as session:
                job = claim_queued_job(session=session, machine_id=machine_id)
            if job is None:
                return
            with lock:
                claimed.append(job.id)

    threads = [threading.Thread(target=claimer) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(claimed) == sorted(set(claimed)) and len(claimed) == 20
    engine.dispose()
