"""Reproducing the thesis in one action: the plan's matrices fill every table of the report,
and their duration is estimated from earlier jobs like them."""

from datetime import timedelta
from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select
from xaclab_contracts.suites import AGENT_FACTOR_NAMES, load_suites

from tests.reproduction_helpers import register_machine
from xaclab_server.models import Job, Machine, Run
from xaclab_server.services.matrices import expand
from xaclab_server.services.reproduction import REPORT_TABLES, load_report_figures
from xaclab_server.services.reproduction_plan import PLAN, PlannedMatrix, estimate_plan
from xaclab_server.services.thesis_figures import Mapping

ANY_TREE = "all"


def _mappings(table: str) -> list[Mapping]:
    found = load_report_figures().tables[table]
    cells = [c for row in found.rows for c in row.cells.values() if isinstance(c, Mapping)]
    return [*cells, *found.refs.values(), *(m.mapping for m in found.model)]


def _agrees(job: dict[str, Any], mapping: Mapping, job_params: set[str]) -> bool:
    """A job's results can match the mapping: every job-level param the mapping names is the
    job's (a param the job leaves out is the program's to vary; tree=all runs every tree)."""
    for name, value in mapping.params:
        if name not in job_params or name not in job:
            continue
        if name == "tree" and job[name] == ANY_TREE:
            continue
        if job[name] != value:
            return False
    return True


def uncovered(plan: tuple[PlannedMatrix, ...]) -> list[str]:
    suites = load_suites()
    missing = []
    for table in REPORT_TABLES:
        for mapping in _mappings(table):
            job_params = {*suites[mapping.suite].params, *AGENT_FACTOR_NAMES}
            if not any(
                p.suite == mapping.suite
                and table in p.tables
                and any(
                    _agrees({**p.params, **combo}, mapping, job_params)
                    for combo in expand(p.spec(1))
                )
                for p in plan
            ):
                missing.append(
                    f"{table}: {mapping.suite} {mapping.benchmark} {dict(mapping.params)}"
                )
    return missing


def test_the_plan_fills_every_table_of_the_report() -> None:
    assert uncovered(PLAN) == []
    assert {t for p in PLAN for t in p.tables} == set(REPORT_TABLES)
    assert sum(len(expand(p.spec(1))) for p in PLAN) == 11


def test_a_plan_without_the_write_cache_off_would_leave_tables_empty() -> None:
    cached = tuple(
        PlannedMatrix(
            p.suite, p.profile, {**p.params, "write_cache": "on"}, p.factors, p.tables, p.why
        )
        if p.params.get("write_cache") == "off"
        else p
        for p in PLAN
    )
    missing = uncovered(cached)
    assert {m.split(":")[0] for m in missing} == {"4.7", "4.8", "4.10", "C.10", "5.5", "5.6"}


def _finished_job(
    app: FastAPI, machine_id: int, planned: PlannedMatrix, params: dict[str, Any], seconds: float
) -> None:
    with app.state.sessionmaker() as session:
        run_job = Job(
            run_id=_run(session, machine_id, planned),
            machine_id=machine_id,
            suite=planned.suite,
            profile=planned.profile,
            params=params,
            status="succeeded",
        )
        session.add(run_job)
        session.flush()
        run_job.claimed_at = run_job.created_at
        run_job.finished_at = run_job.created_at + timedelta(seconds=seconds)
        session.commit()


def _run(session: Any, machine_id: int, planned: PlannedMatrix) -> int:
    run = Run(
        machine_id=machine_id,
        suite=planned.suite,
        profile=planned.profile,
        params={},
        status="succeeded",
    )
    session.add(run)
    session.flush()
    return run.id


def test_the_estimate_comes_from_earlier_jobs_like_these(client: TestClient, app: FastAPI) -> None:
    here, _agent = register_machine(client, "lab-estimate")
    there, _agent = register_machine(client, "lab-elsewhere")
    storage_plain = PLAN[2]
    for seconds in (100.0, 300.0, 200.0):
        _finished_job(app, here, storage_plain, {}, seconds)
    _finished_job(app, there, storage_plain, {}, 5000.0)
    c12 = PLAN[-1]
    # A nondurable tree job of 25,000 keys took 60 s elsewhere: 250,000 keys, roughly ten times.
    _finished_job(
        app, there, c12, {**c12.params, "count": 25_000, "durability": "nondurable"}, 60.0
    )
    with app.state.sessionmaker() as session:
        machine = session.scalar(select(Machine).where(Machine.id == here))
        assert machine is not None
        plan = estimate_plan(session=session, machine=machine)
    storage, storage_off = plan.matrices[2], plan.matrices[3]
    (plain,) = storage.jobs
    assert plain.seconds == 200.0 and plain.basis == "3 earlier job(s) here"
    # The same suite and profile with other params (write cache off): roughly as long.
    assert storage_off.jobs[0].seconds == 200.0
    assert storage_off.jobs[0].basis.startswith("rough: 3 earlier job(s) here")
    trees = [j for m in plan.matrices if m.planned.suite == "search-tree" for j in m.jobs]
    assert len(trees) == 5
    assert all(j.seconds == 600.0 for j in trees)
    assert trees[0].basis == "rough: 1 earlier job(s) on other machines with other parameters"
    # page-touch and concurrency never ran anywhere: no estimate, and the page says so.
    assert plan.unknown == 4
    assert plan.seconds == 200.0 + 200.0 + 5 * 600.0
