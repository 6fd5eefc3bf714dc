"""User API: the baseline run of each suite on a machine, which one-click comparisons use."""

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Response, status

from xaclab_server.api.deps import OperatorUser, SessionDep
from xaclab_server.api.routes.machines import get_machine
from xaclab_server.models import Baseline, Run
from xaclab_server.schemas.baseline import BaselineIn, BaselineOut
from xaclab_server.services.baselines import (
    BaselineRefused,
    baselines_of,
    clear_baseline,
    set_baseline,
)

router = APIRouter(prefix="/api/v1", tags=["user"])
SuiteName = Annotated[str, Path(min_length=1, max_length=100)]


def baseline_out(baseline: Baseline) -> BaselineOut:
    return BaselineOut(
        machine_id=baseline.machine_id,
        suite=baseline.suite,
        run_id=baseline.run_id,
        set_by_id=baseline.set_by_id,
        set_at=baseline.set_at,
    )


@router.get("/machines/{machine_id}/baselines")
def list_baselines(session: SessionDep, machine_id: int) -> list[BaselineOut]:
    """The machine's baseline run of each suite that has one."""
    get_machine(session, machine_id)
    return [baseline_out(b) for b in baselines_of(session=session, machine_id=machine_id)]


@router.put("/machines/{machine_id}/baselines/{suite}")
def put_baseline(
    session: SessionDep, machine_id: int, suite: SuiteName, body: BaselineIn, user: OperatorUser
) -> BaselineOut:
    """Make ``run_id`` (a run of ``suite`` on this machine, with results) the suite's baseline
    on the machine, replacing the one before."""
    get_machine(session, machine_id)
    run = session.get(Run, body.run_id)
    if run is None or (run.machine_id, run.suite) != (machine_id, suite):
        raise HTTPException(
            422, f"Run {body.run_id} is not a run of {suite} on machine {machine_id}."
        )
    try:
        return baseline_out(set_baseline(session=session, run=run, user_id=user.id))
    except BaselineRefused as exc:
        raise HTTPException(422, str(exc)) from exc


@router.delete("/machines/{machine_id}/baselines/{suite}", status_code=status.HTTP_204_NO_CONTENT)
def delete_baseline(
    session: SessionDep, machine_id: int, suite: SuiteName, _user: OperatorUser
) -> Response:
    """Forget the suite's baseline on the machine."""
    get_machine(session, machine_id)
    if not clear_baseline(session=session, machine_id=machine_id, suite=suite):
        raise HTTPException(404, f"Machine {machine_id} has no baseline of {suite}.")
    return Response(status_code=status.HTTP_204_NO_CONTENT)
