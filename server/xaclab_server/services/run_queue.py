"""Queuing one run: the run form and ``POST /api/v1/runs`` both come here."""

from sqlalchemy.orm import Session

from xaclab_server.models import Machine, Run
from xaclab_server.schemas.run import RunIn
from xaclab_server.services import jobs
from xaclab_server.services.libxac_git import LibxacGit, resolve_job_revision
from xaclab_server.services.notifier import JobNotifier
from xaclab_server.services.suites import ParamError, Suite, check_run_request


class RunRefused(ValueError):
    """The request names no known machine, or its suite refuses its profile or parameters."""


def queue_run(
    *,
    session: Session,
    suites: dict[str, Suite],
    notifier: JobNotifier,
    request: RunIn,
    user_id: int | None,
    git: LibxacGit | None = None,
) -> Run:
    """Validate a run request against its suite, queue it and wake claims.  A
    ``libxac_revision`` must name a commit of ``git`` and is stored as its full hash."""
    machine = session.get(Machine, request.machine_id)
    if machine is None:
        raise RunRefused(f"Machine {request.machine_id} does not exist.")
    try:
        check_run_request(
            suites=suites, suite=request.suite, profile=request.profile, params=request.params
        )
        params = resolve_job_revision(request.params, git)
    except ParamError as exc:
        raise RunRefused(str(exc)) from exc
    run = jobs.create_run(
        session=session,
        machine=machine,
        suite=request.suite,
        profile=request.profile,
        params=params,
    )
    run.created_by_id = user_id
    session.commit()
    notifier.notify()
    return run
