"""User API: the thesis-reproduction report of a machine, as JSON, Markdown or HTML."""

import re
from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Path, status
from fastapi.responses import Response

from xaclab_server.api.deps import (
    NotifierDep,
    OperatorUser,
    SessionDep,
    SuitesDep,
    ThesisFiguresDep,
)
from xaclab_server.api.routes.matrices import matrix_created
from xaclab_server.models import Machine
from xaclab_server.models.base import utcnow
from xaclab_server.schemas.matrix import ReproductionQueued
from xaclab_server.services.reproduction import MAX_ID, machine_report
from xaclab_server.services.reproduction_export import report_html, report_json, report_markdown
from xaclab_server.services.reproduction_plan import estimate_plan, queue_plan
from xaclab_server.services.suites import ParamError

router = APIRouter(prefix="/api/v1", tags=["user"])

MachineId = Annotated[int, Path(ge=1, le=MAX_ID, description="The machine's id.")]
Format = Literal["json", "markdown", "html"]
MEDIA_TYPES = {
    "json": "application/json",
    "markdown": "text/markdown; charset=utf-8",
    "html": "text/html; charset=utf-8",
}
SUFFIXES = {"markdown": "md", "html": "html"}


@router.get(
    "/machines/{machine_id}/reproduction",
    responses={
        200: {
            "description": "JSON; or, with format=markdown or html, a document to download",
            "content": {"text/markdown": {}, "text/html": {}},
        },
        404: {"description": "No such machine"},
    },
)
def read_reproduction(
    session: SessionDep, figures: ThesisFiguresDep, machine_id: MachineId, format: Format = "json"
) -> Response:
    """The thesis's tables beside this machine's newest results (docs/thesis-reproduction.md)."""
    report = machine_report(session=session, figures=figures, machine_id=machine_id, now=utcnow())
    if report is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"Machine {machine_id} does not exist.")
    if format == "json":
        return Response(report_json(report), media_type=MEDIA_TYPES["json"])
    body = report_markdown(report) if format == "markdown" else report_html(report)
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", report.machine.name)[:80] or "machine"
    filename = f"xaclab-reproduction-{name}.{SUFFIXES[format]}"
    return Response(
        body,
        media_type=MEDIA_TYPES[format],
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


@router.post("/machines/{machine_id}/reproduction/queue", status_code=status.HTTP_201_CREATED)
def queue_reproduction(
    session: SessionDep,
    suites: SuitesDep,
    notifier: NotifierDep,
    machine_id: MachineId,
    user: OperatorUser,
) -> ReproductionQueued:
    """Queue on this machine every matrix the report's tables need (durable and nondurable,
    write cache on and off, the thesis's process and key counts); with how long the jobs
    took before, where such jobs ran (docs/thesis-reproduction.md, "In one action")."""
    machine = session.get(Machine, machine_id)
    if machine is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"Machine {machine_id} does not exist.")
    plan = estimate_plan(session=session, machine=machine)
    try:
        queued = queue_plan(session=session, suites=suites, machine_id=machine.id, user_id=user.id)
    except ParamError as exc:
        raise HTTPException(422, str(exc)) from exc
    notifier.notify()
    created = [matrix_created(matrix, runs) for matrix, runs in queued]
    return ReproductionQueued(
        machine_id=machine.id,
        matrices=created,
        jobs=sum(len(r.job_ids) for m in created for r in m.runs),
        estimated_seconds=plan.seconds,
        unestimated_jobs=plan.unknown,
    )
