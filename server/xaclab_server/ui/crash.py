"""The crash-consistency page (/crash): one run's crash points per system, mode and kind.

Readable like every other page.  Without ``run`` it shows the newest run that has
crash-consistency results.
"""

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from xaclab_contracts.suites import declared_systems

from xaclab_server.api.deps import SessionDep, SuitesDep
from xaclab_server.models import Run
from xaclab_server.services.crash_table import COUNTS, crash_rows, newest_run_id
from xaclab_server.ui.guards import PageReader, page_router
from xaclab_server.ui.rendering import not_found, render

router = page_router()


@router.get("/crash", response_class=HTMLResponse)
def crash_page(
    request: Request,
    session: SessionDep,
    suites: SuitesDep,
    _reader: PageReader,
    run: str | None = None,
) -> Response:
    if run:
        run_id = int(run) if run.isdigit() and len(run) < 12 else 0
        if session.get(Run, run_id) is None:
            return not_found(request, f"Run {run!r}")
    else:
        run_id = newest_run_id(session) or 0
    rows = crash_rows(session, run_id, declared_systems(suites)) if run_id else []
    return render(
        request, "crash.html", {"run": session.get(Run, run_id), "rows": rows, "counts": COUNTS}
    )
