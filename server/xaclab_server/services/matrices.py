"""Run matrices: validate suites × machines × factors and expand them into runs and jobs.

One run per (machine, suite, profile); in it one job per combination of the
factor values, each job's params being the matrix's fixed params plus that
combination.  Every job's params are checked against its suite exactly as a
single run's are (:func:`xaclab_server.services.suites.check_run_request`):
a factor the suite does not declare is refused unless the agent applies it
itself (write_cache, pin_cpu, drop_caches ...).  Nothing is stored unless
the whole matrix is valid.
"""

import itertools
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from xaclab_server.models import Job, Machine, Matrix, Run
from xaclab_server.schemas.matrix import MatrixIn
from xaclab_server.services.libxac_git import LibxacGit, resolve_job_revision
from xaclab_server.services.suites import AGENT_FACTORS, ParamError, Suite, check_run_request

MAX_JOBS = 1000


def expand(spec: MatrixIn) -> list[dict[str, Any]]:
    """Every combination of the factors' values, in a stable order."""
    names = sorted(spec.factors)
    combos = itertools.product(*(spec.factors[name] for name in names))
    return [dict(zip(names, values, strict=True)) for values in combos]


def check_matrix(
    *, session: Session, suites: dict[str, Suite], spec: MatrixIn, git: LibxacGit | None = None
) -> list[Machine]:
    """The matrix's machines; ParamError with a sentence for anything wrong (a
    ``libxac_revision`` that names no commit of ``git`` too)."""
    overlap = sorted(set(spec.params) & set(spec.factors))
    if overlap:
        raise ParamError(f"{', '.join(overlap)} is both a fixed parameter and a factor.")
    combos = expand(spec)
    total = (
        len(set(spec.machine_ids)) * len(set(spec.suites)) * len(set(spec.profiles)) * len(combos)
    )
    if total > MAX_JOBS:
        raise ParamError(f"The matrix has {total} jobs; at most {MAX_JOBS} are accepted at once.")
    machines = list(
        session.scalars(
            select(Machine).where(Machine.id.in_(spec.machine_ids)).order_by(Machine.id)
        )
    )
    missing = sorted(set(spec.machine_ids) - {m.id for m in machines})
    if missing:
        raise ParamError(f"Machine {missing[0]} does not exist.")
    for suite in dict.fromkeys(spec.suites):
        found = suites.get(suite)
        for name in spec.factors:
            if found is not None and name not in found.params and not _agent_level(name):
                declared = ", ".join(sorted(found.params)) or "none"
                raise ParamError(
                    f"Suite {suite!r} does not declare the factor {name!r}, and the agent does "
                    f"not apply it; the suite's parameters are: {declared}."
                )
        for profile in dict.fromkeys(spec.profiles):
            for combo in combos:
                check_run_request(
                    suites=suites, suite=suite, profile=profile, params={**spec.params, **combo}
                )
    for revision in _revisions(spec):
        resolve_job_revision({"libxac_revision": revision}, git)
    return machines


def _revisions(spec: MatrixIn) -> list[Any]:
    asked = [spec.params["libxac_revision"]] if "libxac_revision" in spec.params else []
    return list(dict.fromkeys([*asked, *spec.factors.get("libxac_revision", [])]))


def _agent_level(name: str) -> bool:
    return name in AGENT_FACTORS or name in ("target_dir", "libxac_revision")


def queue_matrix(
    *,
    session: Session,
    suites: dict[str, Suite],
    spec: MatrixIn,
    user_id: int | None,
    schedule_id: int | None = None,
    git: LibxacGit | None = None,
) -> tuple[Matrix, list[Run]]:
    """Validate, then store the matrix, its runs and jobs in one transaction; commit.  Each
    ``libxac_revision`` is stored as the full hash of the commit it names now."""
    machines = check_matrix(session=session, suites=suites, spec=spec, git=git)
    full = {
        r: resolve_job_revision({"libxac_revision": r}, git)["libxac_revision"]
        for r in _revisions(spec)
    }
    matrix = Matrix(
        spec=spec.model_dump(mode="json"), created_by_id=user_id, schedule_id=schedule_id
    )
    session.add(matrix)
    session.flush()
    runs = []
    combos = expand(spec)
    for machine in machines:
        for suite in dict.fromkeys(spec.suites):
            for profile in dict.fromkeys(spec.profiles):
                run = Run(
                    machine_id=machine.id,
                    suite=suite,
                    profile=profile,
                    params=dict(spec.params),
                    status="queued",
                    matrix_id=matrix.id,
                    created_by_id=user_id,
                )
                for combo in combos:
                    run.jobs.append(
                        Job(
                            machine_id=machine.id,
                            suite=suite,
                            profile=profile,
                            params=_pinned({**spec.params, **combo}, full),
                            status="queued",
                        )
                    )
                session.add(run)
                runs.append(run)
    session.commit()
    return matrix, runs


def _pinned(params: dict[str, Any], full: dict[Any, str]) -> dict[str, Any]:
    if "libxac_revision" in params:
        return {**params, "libxac_revision": full[params["libxac_revision"]]}
    return params


def rerun(*, session: Session, run: Run, user_id: int | None) -> Run:
    """A new run with the same machine, suite, profile and jobs' params; commit."""
    copy = Run(
        machine_id=run.machine_id,
        suite=run.suite,
        profile=run.profile,
        params=dict(run.params),
        status="queued",
        matrix_id=run.matrix_id,
        created_by_id=user_id,
    )
    for job in run.jobs:
        copy.jobs.append(
            Job(
                machine_id=job.machine_id,
                suite=job.suite,
                profile=job.profile,
                params=dict(job.params),
                status="queued",
            )
        )
    session.add(copy)
    session.commit()
    return copy
