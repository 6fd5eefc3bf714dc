"""User API: the thesis-reproduction report of a machine, as JSON, Markdown or HTML."""

import re
from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Path, status
from fastapi.responses import Response

from xaclab_server.api.deps import SessionDep, ThesisFiguresDep
from xaclab_server.models.base import utcnow
from xaclab_server.services.reproduction import MAX_ID, machine_report
from xaclab_server.services.reproduction_export import report_html, report_json, report_markdown

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
